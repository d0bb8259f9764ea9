package outbound

import (
	"bytes"
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"

	"code.dny.dev/ssrf"
)

func TestParsePolicy(t *testing.T) {
	cases := []struct {
		name      string
		allow     []string
		ports     []int
		wantCIDRs []string
		wantHosts []string
		wantErr   string
	}{
		{"an empty setting allows nothing extra", nil, nil, nil, nil, ""},
		{"CIDRs are masked to their network", []string{"10.1.2.3/8"}, nil, []string{"10.0.0.0/8"}, nil, ""},
		{"a bare address means exactly that address", []string{"10.0.0.5", "fd00::1"}, nil, []string{"10.0.0.5/32", "fd00::1/128"}, nil, ""},
		{"host names are lowercased and lose the trailing dot", []string{" CRM.Example.COM. "}, nil, nil, []string{"crm.example.com"}, ""},
		{"a wildcard host is kept as a pattern", []string{"*.svc.cluster.local"}, nil, nil, []string{"*.svc.cluster.local"}, ""},
		{"blank entries are skipped", []string{"", "  "}, nil, nil, nil, ""},
		{"a URL is not a host name", []string{"https://crm.example.com"}, nil, nil, nil, "neither a CIDR"},
		{"a host with a port is rejected", []string{"crm.example.com:8080"}, nil, nil, nil, "neither a CIDR"},
		{"a bad CIDR is rejected", []string{"10.0.0.0/33"}, nil, nil, nil, "neither a CIDR"},
		{"port zero is rejected", nil, []int{0}, nil, nil, "not a port number"},
		{"a port above 65535 is rejected", nil, []int{70000}, nil, nil, "not a port number"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePolicy(tc.allow, tc.ports)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var cidrs []string
			for _, c := range p.AllowCIDRs {
				cidrs = append(cidrs, c.String())
			}
			if strings.Join(cidrs, ",") != strings.Join(tc.wantCIDRs, ",") {
				t.Errorf("CIDRs = %v, want %v", cidrs, tc.wantCIDRs)
			}
			if strings.Join(p.AllowHosts, ",") != strings.Join(tc.wantHosts, ",") {
				t.Errorf("hosts = %v, want %v", p.AllowHosts, tc.wantHosts)
			}
		})
	}
}

func TestBodyLimitDefaultsTo64KiB(t *testing.T) {
	if got := (Policy{}).BodyLimit(); got != 64<<10 {
		t.Errorf("default = %d", got)
	}
	if got := (Policy{MaxBodyBytes: 10}).BodyLimit(); got != 10 {
		t.Errorf("set = %d", got)
	}
}

func TestEveryRangeOfTheSSRFPackageIsDenied(t *testing.T) {
	// We name ranges ourselves for clearer errors; this keeps the union with
	// the upstream IANA lists honest when either side changes.
	var p Policy
	for _, prefix := range append(append([]netip.Prefix{}, ssrf.IPv4DeniedPrefixes...), ssrf.IPv6DeniedPrefixes...) {
		for _, addr := range []netip.Addr{prefix.Addr(), lastAddr(prefix)} {
			if p.denyReason(addr) == "" {
				t.Errorf("%s (in %s) is allowed", addr, prefix)
			}
		}
	}
	for _, r := range specialRanges {
		if p.denyReason(r.prefix.Addr()) == "" {
			t.Errorf("%s (%s) is allowed", r.prefix, r.reason)
		}
	}
}

func TestPublicAddressesAreAllowed(t *testing.T) {
	var p Policy
	for _, a := range []string{"93.184.216.34", "8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.0",
		"172.15.255.255", "172.32.0.0", "192.167.255.255", "198.17.255.255", "223.255.255.255",
		"2606:4700:4700::1111", "2a00:1450:4001:80b::200e"} {
		if reason := p.denyReason(netip.MustParseAddr(a)); reason != "" {
			t.Errorf("%s is denied as %s", a, reason)
		}
	}
}

func TestParseIPReadsLegacyIPv4Spellings(t *testing.T) {
	cases := []struct{ host, want string }{
		{"127.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"0x7F.0.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"10.1", "10.0.0.1"},
		{"192.168.257", "192.168.1.1"},
		{"0", "0.0.0.0"},
		{"0x", "0.0.0.0"},
		{"4294967295", "255.255.255.255"},
		{"::ffff:7f00:1", "::ffff:127.0.0.1"},
		{"4294967296", ""},
		{"1.2.3.256", ""},
		{"256.1.1.1", ""},
		{"1.2.3.4.5", ""},
		{"08.1.1.1", ""},
		{"0x1g.1", ""},
		{"1..1", ""},
		{"example.com", ""},
		{"1e3", ""},
		{"-1", ""},
		{"+1", ""},
	}
	for _, tc := range cases {
		got, ok := parseIP(tc.host)
		if tc.want == "" {
			if ok {
				t.Errorf("parseIP(%q) = %s, want not an address", tc.host, got)
			}
			continue
		}
		if !ok || got.String() != tc.want {
			t.Errorf("parseIP(%q) = %s, %v; want %s", tc.host, got, ok, tc.want)
		}
	}
}

func TestReadBody(t *testing.T) {
	cases := []struct {
		name          string
		body          string
		limit         int64
		want          string
		wantTruncated bool
	}{
		{"a body under the limit is read whole", "hello", 10, "hello", false},
		{"a body exactly at the limit is not truncated", "hello", 5, "hello", false},
		{"a body over the limit is cut and marked", "hello world", 5, "hello", true},
		{"a zero limit means the default", strings.Repeat("x", DefaultMaxBodyBytes+1), 0, strings.Repeat("x", DefaultMaxBodyBytes), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, truncated, err := ReadBody(strings.NewReader(tc.body), tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want || truncated != tc.wantTruncated {
				t.Errorf("got %d bytes, truncated=%v; want %d bytes, truncated=%v", len(got), truncated, len(tc.want), tc.wantTruncated)
			}
		})
	}
	t.Run("a read error is reported with what was read", func(t *testing.T) {
		r := iotest.TimeoutReader(iotest.OneByteReader(bytes.NewReader([]byte("ab"))))
		got, _, err := ReadBody(r, 10)
		if err == nil || string(got) != "a" {
			t.Fatalf("got %q, %v; want \"a\" and an error", got, err)
		}
	})
}

func TestCleanErrorStripsSecretsFromURLs(t *testing.T) {
	err := &url.Error{Op: "Get", URL: "https://user:pw@api.example.com/v1/x?api_key=s3cret#frag", Err: errors.New("boom")}
	got := CleanError(err).Error()
	for _, leak := range []string{"s3cret", "pw", "frag", "user"} {
		if strings.Contains(got, leak) {
			t.Errorf("%q still contains %q", got, leak)
		}
	}
	if !strings.Contains(got, "https://api.example.com/v1/x") || !strings.Contains(got, "boom") {
		t.Errorf("%q lost the useful part", got)
	}
	if !errors.Is(CleanError(err), err.Err) {
		t.Error("CleanError broke the error chain")
	}
	if StripURL("http://a b/?k=s3cret") != "http://a b/" {
		t.Errorf("StripURL of an unparsable URL = %q", StripURL("http://a b/?k=s3cret"))
	}
}

func TestDeniedErrorNamesTheHostNotTheResolvedAddress(t *testing.T) {
	err := &DeniedError{Host: "crm.internal", Addr: netip.MustParseAddr("10.0.0.5"), Reason: "resolves to a private address", Setting: "PARLEY_OUTBOUND_ALLOW"}
	want := "destination crm.internal resolves to a private address; ask the operator to allow it in PARLEY_OUTBOUND_ALLOW"
	if err.Error() != want {
		t.Errorf("got %q, want %q", err.Error(), want)
	}
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}
