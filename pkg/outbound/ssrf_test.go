package outbound

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// ssrfCases are URLs a tenant might write to reach the platform's own
// network. {p4} and {p6} are the ports of real listeners on 127.0.0.1 and
// [::1], which the policy allows as extra ports, so only the address rules
// stand between each URL and a listener. want is a fragment of the refusal.
var ssrfCases = []struct{ url, want string }{
	// IPv4 loopback, canonical and in every legacy spelling.
	{"http://127.0.0.1:{p4}/", "loopback"},
	{"https://127.0.0.1:{p4}/", "loopback"},
	{"http://127.1:{p4}/", "loopback"},
	{"http://127.0.1:{p4}/", "loopback"},
	{"http://2130706433:{p4}/", "loopback"},
	{"http://0177.0.0.1:{p4}/", "loopback"},
	{"http://0177.1:{p4}/", "loopback"},
	{"http://0x7f.1:{p4}/", "loopback"},
	{"http://0x7f000001:{p4}/", "loopback"},
	{"http://0x7F.0x0.0x0.0x1:{p4}/", "loopback"},
	{"http://017700000001:{p4}/", "loopback"},
	{"http://0x7f.0.0.1:{p4}/", "loopback"},
	{"http://127.000.000.001:{p4}/", "loopback"},
	{"http://0177.0x0.0.01:{p4}/", "loopback"},
	{"http://127.0.0.1.:{p4}/", "loopback"},
	{"http://127.2.3.4:{p4}/", "loopback"},
	{"http://127.255.255.254:{p4}/", "loopback"},
	{"http://user@127.0.0.1:{p4}/", "loopback"},
	{"http://example.com@127.0.0.1:{p4}/", "loopback"},
	{"http://127.0.0.1:{p4}#@example.com/", "loopback"},
	{"http://127.0.0.1:{p4}?@example.com/", "loopback"},
	// IPv6 loopback and IPv4 loopback embedded in IPv6.
	{"http://[::1]:{p6}/", "loopback"},
	{"http://[0:0:0:0:0:0:0:1]:{p6}/", "loopback"},
	{"http://[0000:0000:0000:0000:0000:0000:0000:0001]:{p6}/", "loopback"},
	{"http://[::ffff:127.0.0.1]:{p4}/", "loopback"},
	{"http://[::ffff:7f00:1]:{p4}/", "loopback"},
	{"http://[0:0:0:0:0:ffff:7f00:1]:{p4}/", "loopback"},
	{"http://[0:0:0:0:0:ffff:127.0.0.1]:{p4}/", "loopback"},
	{"http://[::FFFF:7F00:0001]:{p4}/", "loopback"},
	{"http://[::ffff:0:7f00:1]:{p4}/", "IPv4-translated"},
	{"http://[::127.0.0.1]:{p4}/", "IPv4-compatible"},
	{"http://[64:ff9b::7f00:1]:{p4}/", "NAT64"},
	{"http://[64:ff9b::127.0.0.1]:{p4}/", "NAT64"},
	{"http://[64:ff9b:1::7f00:1]:{p4}/", "NAT64"},
	{"http://[2002:7f00:1::]:{p4}/", "6to4"},
	{"http://[2001:0:7f00:1::]:{p4}/", "Teredo"},
	// Unspecified addresses: connecting to them reaches the local host.
	{"http://0.0.0.0:{p4}/", "unspecified"},
	{"http://0:{p4}/", "unspecified"},
	{"http://0x0:{p4}/", "unspecified"},
	{"http://00:{p4}/", "unspecified"},
	{"http://0.0.0.0.:{p4}/", "unspecified"},
	{"http://0.1.2.3:{p4}/", "unspecified"},
	{"http://[::]:{p6}/", "unspecified"},
	{"http://[0:0:0:0:0:0:0:0]:{p6}/", "unspecified"},
	// Local host names, refused before any lookup.
	{"http://localhost:{p4}/", "local host name"},
	{"http://localhost.:{p4}/", "local host name"},
	{"http://LOCALHOST:{p4}/", "local host name"},
	{"http://LocalHost.:{p4}/", "local host name"},
	{"http://sub.localhost:{p4}/", "local host name"},
	{"http://a.b.localhost:{p6}/", "local host name"},
	// Unicode look-alikes: the transport maps hosts through IDNA before
	// dialing, so the checks see the ASCII form.
	{"http://ｌｏｃａｌｈｏｓｔ:{p4}/", "local host name"},
	{"http://１２７.０.０.１:{p4}/", "loopback"},
	{"http://127。0。0。1:{p4}/", "loopback"},
	// Names that resolve to denied addresses.
	{"http://localhost.localdomain:{p4}/", "resolves to a loopback"},
	{"http://loop.example.test:{p4}/", "resolves to a loopback"},
	{"http://LOOP.Example.Test.:{p4}/", "resolves to a loopback"},
	{"http://loop6.example.test:{p6}/", "resolves to a loopback"},
	{"http://mixed.example.test:{p4}/", "resolves to a loopback"},
	{"http://mapped.example.test:{p4}/", "resolves to a loopback"},
	{"http://nat64.example.test:{p4}/", "resolves to an IPv4/IPv6 translation"},
	{"http://private.example.test:{p4}/", "resolves to a private"},
	{"http://metadata.google.internal:{p4}/", "resolves to the cloud metadata"},
	{"http://metadata.google.internal/computeMetadata/v1/", "resolves to the cloud metadata"},
	{"http://metadata6.example.test:{p6}/", "resolves to the cloud metadata"},
	// Cloud metadata in every spelling.
	{"http://169.254.169.254/latest/meta-data/", "cloud metadata"},
	{"http://169.254.169.254:{p4}/", "cloud metadata"},
	{"http://0xa9fea9fe:{p4}/", "cloud metadata"},
	{"http://2852039166:{p4}/", "cloud metadata"},
	{"http://0251.0376.0251.0376:{p4}/", "cloud metadata"},
	{"http://169.254.43518:{p4}/", "cloud metadata"},
	{"http://[fd00:ec2::254]/latest/meta-data/", "cloud metadata"},
	{"http://[::ffff:169.254.169.254]:{p4}/", "cloud metadata"},
	{"http://[::ffff:a9fe:a9fe]:{p4}/", "cloud metadata"},
	{"http://[64:ff9b::a9fe:a9fe]:{p4}/", "NAT64"},
	// Private networks (RFC 1918, ULA).
	{"http://10.0.0.5:{p4}/", "private"},
	{"http://10.255.255.255:{p4}/", "private"},
	{"http://10.1:{p4}/", "private"},
	{"http://167772165:{p4}/", "private"},
	{"http://172.16.0.1:{p4}/", "private"},
	{"http://172.31.255.254:{p4}/", "private"},
	{"http://172.16.1:{p4}/", "private"},
	{"http://192.168.0.1:{p4}/", "private"},
	{"http://192.168.257:{p4}/", "private"},
	{"http://0xc0.0xa8.1.1:{p4}/", "private"},
	{"http://3232235777:{p4}/", "private"},
	{"http://[::ffff:10.0.0.5]:{p4}/", "private"},
	{"http://[fc00::1]:{p6}/", "private"},
	{"http://[fd12:3456:789a::1]:{p6}/", "private"},
	// Link-local, CGNAT, multicast, broadcast.
	{"http://169.254.0.1:{p4}/", "link-local"},
	{"http://[fe80::1]:{p6}/", "link-local"},
	{"http://[fe80::1%25lo]:{p6}/", "link-local"},
	{"http://100.64.0.1:{p4}/", "carrier-grade NAT"},
	{"http://100.127.255.254:{p4}/", "carrier-grade NAT"},
	{"http://224.0.0.1:{p4}/", "multicast"},
	{"http://239.255.255.250:{p4}/", "multicast"},
	{"http://[ff02::1]:{p6}/", "multicast"},
	{"http://[ff05::1:3]:{p6}/", "multicast"},
	{"http://255.255.255.255:{p4}/", "broadcast"},
	{"http://4294967295:{p4}/", "broadcast"},
	// The rest of the special-purpose registry.
	{"http://192.0.0.1:{p4}/", "IETF protocol assignment"},
	{"http://192.0.0.170:{p4}/", "IETF protocol assignment"},
	{"http://192.0.2.1:{p4}/", "documentation"},
	{"http://198.51.100.7:{p4}/", "documentation"},
	{"http://203.0.113.9:{p4}/", "documentation"},
	{"http://198.18.0.1:{p4}/", "benchmarking"},
	{"http://198.19.255.254:{p4}/", "benchmarking"},
	{"http://240.0.0.1:{p4}/", "reserved"},
	{"http://250.1.2.3:{p4}/", "reserved"},
	{"http://[2001:db8::1]:{p6}/", "documentation"},
	{"http://[3fff::1]:{p6}/", "documentation"},
	{"http://[100::1]:{p6}/", "discard-only"},
	{"http://[2001::1]:{p6}/", "Teredo"},
	{"http://[2002:a00:5::]:{p6}/", "6to4"},
	{"http://[::a00:5]:{p6}/", "IPv4-compatible"},
	{"http://[4000::1]:{p6}/", "special-purpose"},
	// Ports outside 80, 443 and the extra ports, checked before any lookup.
	{"http://93.184.216.34:22/", "port"},
	{"http://127.0.0.1:6379/", "port"},
	{"http://public.example.test:25/", "port"},
	{"https://public.example.test:8443/", "port"},
}

// ssrfResolver plays the DNS answers an attacker would set up.
func ssrfResolver() *fakeResolver {
	return newFakeResolver(map[string][]string{
		"localhost":                {"127.0.0.1", "::1"},
		"localhost.localdomain":    {"127.0.0.1"},
		"loop.example.test":        {"127.0.0.1"},
		"loop6.example.test":       {"::1"},
		"mixed.example.test":       {"93.184.216.34", "127.0.0.1"},
		"mapped.example.test":      {"::ffff:127.0.0.1"},
		"nat64.example.test":       {"64:ff9b::7f00:1"},
		"private.example.test":     {"10.0.0.5"},
		"metadata.google.internal": {"169.254.169.254"},
		"metadata6.example.test":   {"fd00:ec2::254"},
		"public.example.test":      {"93.184.216.34"},
	})
}

func TestClientRefusesEverySSRFDestinationWithoutConnecting(t *testing.T) {
	if len(ssrfCases) < 100 {
		t.Fatalf("the SSRF table has %d cases; keep at least 100", len(ssrfCases))
	}
	v4 := startServer(t, "127.0.0.1:0", nil)
	v6 := startServer(t, "[::1]:0", nil)
	policy, err := ParsePolicy(nil, []int{v4.port(), v6.port()})
	if err != nil {
		t.Fatal(err)
	}
	resolver := ssrfResolver()
	client := NewClient(policy, Options{Resolver: resolver, DialTimeout: 2 * time.Second})
	replacer := strings.NewReplacer("{p4}", itoa(v4.port()), "{p6}", itoa(v6.port()))

	for _, tc := range ssrfCases {
		url := replacer.Replace(tc.url)
		t.Run(tc.url+" is refused: "+tc.want, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				t.Fatalf("building request: %v", err)
			}
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("request to %s succeeded with status %d", url, resp.StatusCode)
			}
			var denied *DeniedError
			if !errors.As(err, &denied) {
				t.Fatalf("error is not a refusal: %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if n := v4.accepted() + v6.accepted(); n != 0 {
				t.Fatalf("%d connection(s) reached a loopback listener", n)
			}
		})
	}
}

func TestLocalhostIsRefusedBeforeAnyLookup(t *testing.T) {
	resolver := ssrfResolver()
	client := NewClient(Policy{}, Options{Resolver: resolver})
	for _, host := range []string{"localhost", "LOCALHOST.", "api.localhost"} {
		if _, err := client.Get("http://" + host + "/"); err == nil {
			t.Fatalf("request to %s succeeded", host)
		}
	}
	if n := resolver.count("localhost"); n != 0 {
		t.Errorf("resolver was asked about localhost %d time(s)", n)
	}
}

func TestSystemResolverAnswersAreCheckedToo(t *testing.T) {
	// Without an injected resolver, names and legacy IPv4 spellings go
	// through the real lookup path and must still be refused.
	v4 := startServer(t, "127.0.0.1:0", nil)
	policy, _ := ParsePolicy(nil, []int{v4.port()})
	client := NewClient(policy, Options{})
	for _, host := range []string{"localhost", "127.0.0.1", "2130706433", "0x7f.1"} {
		t.Run(host+" through the system resolver is refused", func(t *testing.T) {
			resp, err := client.Get("http://" + host + ":" + itoa(v4.port()) + "/")
			if err == nil {
				resp.Body.Close()
				t.Fatal("request succeeded")
			}
			var denied *DeniedError
			if !errors.As(err, &denied) {
				t.Fatalf("error is not a refusal: %v", err)
			}
		})
	}
	if n := v4.accepted(); n != 0 {
		t.Fatalf("%d connection(s) reached the listener", n)
	}
}
