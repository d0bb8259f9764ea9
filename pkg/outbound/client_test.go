package outbound

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

func TestHarnessSeesConnectionsTheOperatorAllowed(t *testing.T) {
	// The SSRF table relies on the listeners counting connections; this
	// proves they do when the operator opens loopback on purpose.
	v4 := startServer(t, "127.0.0.1:0", nil)
	v6 := startServer(t, "[::1]:0", nil)
	policy, err := ParsePolicy([]string{"127.0.0.0/8", "::1"}, []int{v4.port(), v6.port()})
	if err != nil {
		t.Fatal(err)
	}
	client := NewClient(policy, Options{})
	for _, url := range []string{
		"http://127.0.0.1:" + itoa(v4.port()) + "/",
		"http://2130706433:" + itoa(v4.port()) + "/",
		"http://[::ffff:127.0.0.1]:" + itoa(v4.port()) + "/",
		"http://[::1]:" + itoa(v6.port()) + "/",
	} {
		mustGet(t, client, url, "reached")
	}
	if v4.accepted() == 0 || v6.accepted() == 0 {
		t.Fatalf("accepted v4=%d v6=%d, want both > 0", v4.accepted(), v6.accepted())
	}
}

func TestPolicyExceptions(t *testing.T) {
	srv := startServer(t, "127.0.0.1:0", nil)
	port := itoa(srv.port())
	resolver := newFakeResolver(map[string][]string{
		"crm.internal.test": {"127.0.0.1"},
		"a.svc.test":        {"127.0.0.1"},
		"svc.test":          {"127.0.0.1"},
		"other.test":        {"127.0.0.1"},
	})
	cases := []struct {
		name  string
		allow []string
		ports []int
		url   string
		want  string // "" means the request reaches the server
	}{
		{"an allowed CIDR lets its addresses through", []string{"127.0.0.0/8"}, []int{srv.port()}, "http://127.0.0.1:" + port + "/", ""},
		{"an allowed single address lets exactly it through", []string{"127.0.0.1"}, []int{srv.port()}, "http://127.0.0.1:" + port + "/", ""},
		{"an allowed CIDR covers names resolving into it", []string{"127.0.0.1/32"}, []int{srv.port()}, "http://other.test:" + port + "/", ""},
		{"an allowed host name is reached whatever it resolves to", []string{"crm.internal.test"}, []int{srv.port()}, "http://crm.internal.test:" + port + "/", ""},
		{"host names match case-insensitively and without the trailing dot", []string{"CRM.Internal.Test."}, []int{srv.port()}, "http://crm.INTERNAL.test.:" + port + "/", ""},
		{"a wildcard host matches subdomains", []string{"*.svc.test"}, []int{srv.port()}, "http://a.svc.test:" + port + "/", ""},
		{"a wildcard host does not match its parent", []string{"*.svc.test"}, []int{srv.port()}, "http://svc.test:" + port + "/", "resolves to a loopback"},
		{"an allowed host does not open other names with the same address", []string{"crm.internal.test"}, []int{srv.port()}, "http://other.test:" + port + "/", "resolves to a loopback"},
		{"an allowed host does not open its address typed directly", []string{"crm.internal.test"}, []int{srv.port()}, "http://127.0.0.1:" + port + "/", "loopback"},
		{"an allowed CIDR does not open a port", []string{"127.0.0.0/8"}, nil, "http://127.0.0.1:" + port + "/", "PARLEY_OUTBOUND_PORTS"},
		{"an allowed host does not open a port", []string{"crm.internal.test"}, nil, "http://crm.internal.test:" + port + "/", "PARLEY_OUTBOUND_PORTS"},
		{"a neighbouring CIDR does not cover loopback", []string{"10.0.0.0/8"}, []int{srv.port()}, "http://127.0.0.1:" + port + "/", "PARLEY_OUTBOUND_ALLOW=127.0.0.1/32 ("},
		// Every setting the URL needs is named at once, with its value.
		{"a refused port of a refused address names both settings", nil, nil, "http://127.0.0.1:" + port + "/", "with PARLEY_OUTBOUND_ALLOW=127.0.0.1/32 PARLEY_OUTBOUND_PORTS=" + port},
		{"a refused port of a private name names both settings, by name", nil, nil, "http://crm.internal.test:" + port + "/", "with PARLEY_OUTBOUND_ALLOW=crm.internal.test PARLEY_OUTBOUND_PORTS=" + port},
		{"a refused port of an allowed address names only the port", []string{"127.0.0.0/8"}, nil, "http://127.0.0.1:" + port + "/", "with PARLEY_OUTBOUND_PORTS=" + port + " ("},
		{"a local host name is named as it is", nil, []int{srv.port()}, "http://localhost:" + port + "/", "with PARLEY_OUTBOUND_ALLOW=localhost ("},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			policy, err := ParsePolicy(tc.allow, tc.ports)
			if err != nil {
				t.Fatal(err)
			}
			before := srv.accepted()
			resp, err := NewClient(policy, Options{Resolver: resolver}).Get(tc.url)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("request failed: %v", err)
				}
				resp.Body.Close()
				if srv.accepted() == before {
					t.Fatal("the server saw no new connection")
				}
				return
			}
			if err == nil {
				resp.Body.Close()
				t.Fatal("request succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if srv.accepted() != before {
				t.Fatal("a refused request reached the server")
			}
		})
	}
}

func TestRedirects(t *testing.T) {
	denied := startServer(t, "127.0.0.1:0", nil)
	deniedURL := "http://127.0.0.1:" + itoa(denied.port()) + "/admin?token=s3cret"
	var allowed *server
	allowed = startServer(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/final":
			_, _ = w.Write([]byte("final"))
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/to-denied":
			http.Redirect(w, r, deniedURL, http.StatusFound)
		case "/to-other-scheme":
			http.Redirect(w, r, "https://api.allowed.test:"+itoa(allowed.port())+"/final", http.StatusFound)
		}
	}))
	resolver := newFakeResolver(map[string][]string{"api.allowed.test": {"127.0.0.1"}})
	policy, err := ParsePolicy([]string{"api.allowed.test"}, []int{allowed.port(), denied.port()})
	if err != nil {
		t.Fatal(err)
	}
	base := "http://api.allowed.test:" + itoa(allowed.port())
	client := NewClient(policy, Options{Resolver: resolver})

	t.Run("a same-origin redirect is followed", func(t *testing.T) {
		mustGet(t, client, base+"/moved", "final")
	})
	t.Run("a negative MaxRedirects refuses even same-origin redirects", func(t *testing.T) {
		_, err := NewClient(policy, Options{Resolver: resolver, MaxRedirects: -1}).Get(base + "/moved")
		if err == nil || !strings.Contains(err.Error(), "more than 0 redirects") {
			t.Fatalf("err = %v, want a redirect limit error", err)
		}
	})
	t.Run("a redirect loop stops after the limit", func(t *testing.T) {
		_, err := client.Get(base + "/loop")
		var rerr *RedirectError
		if !errors.As(err, &rerr) || !strings.Contains(err.Error(), "more than 5 redirects") {
			t.Fatalf("err = %v, want a redirect limit error", err)
		}
	})
	t.Run("a redirect to another origin is refused, and CleanError drops its query string", func(t *testing.T) {
		_, err := client.Get(base + "/to-denied")
		err = CleanError(err)
		var rerr *RedirectError
		if !errors.As(err, &rerr) || !strings.Contains(err.Error(), "only same-origin redirects") {
			t.Fatalf("err = %v, want a cross-origin refusal", err)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error leaks the query string: %v", err)
		}
	})
	t.Run("a redirect to another scheme on the same host is refused", func(t *testing.T) {
		_, err := client.Get(base + "/to-other-scheme")
		if err == nil || !strings.Contains(err.Error(), "only same-origin redirects") {
			t.Fatalf("err = %v, want a cross-origin refusal", err)
		}
	})
	t.Run("the dialer refuses a redirect target even when a caller follows every redirect", func(t *testing.T) {
		permissive := &http.Client{Transport: NewTransport(policy, Options{Resolver: resolver})}
		_, err := permissive.Get(base + "/to-denied")
		var derr *DeniedError
		if !errors.As(err, &derr) || !strings.Contains(err.Error(), "loopback") {
			t.Fatalf("err = %v, want a loopback refusal", err)
		}
	})
	t.Run("no refused redirect reached the denied server", func(t *testing.T) {
		if n := denied.accepted(); n != 0 {
			t.Fatalf("%d connection(s) reached the denied server", n)
		}
	})
}

func TestDNSRebindingBetweenCheckAndDialIsCaught(t *testing.T) {
	srv := startServer(t, "127.0.0.1:0", nil)
	policy, _ := ParsePolicy(nil, []int{srv.port()})
	resolver := newFakeResolver(nil)
	resolver.add("rebind.example.test", "93.184.216.34") // the answer an early check sees
	resolver.add("rebind.example.test", "127.0.0.1")     // the answer at dial time
	opts := Options{Resolver: resolver}
	url := "http://rebind.example.test:" + itoa(srv.port()) + "/"

	if err := CheckURL(context.Background(), policy, opts, url); err != nil {
		t.Fatalf("the early check should see the public answer: %v", err)
	}
	_, err := NewClient(policy, opts).Get(url)
	var denied *DeniedError
	if !errors.As(err, &denied) || !strings.Contains(err.Error(), "resolves to a loopback") {
		t.Fatalf("err = %v, want a loopback refusal at dial time", err)
	}
	if n := srv.accepted(); n != 0 {
		t.Fatalf("%d connection(s) reached the server", n)
	}
}

func TestControlHookRefusesAtConnectTime(t *testing.T) {
	// The dialer checks addresses before dialing; the Control hook is the
	// last line, seeing the address connect() is about to use. Dial through
	// it directly to prove it holds on its own.
	srv := startServer(t, "127.0.0.1:0", nil)
	policy, _ := ParsePolicy(nil, []int{srv.port()})
	d := newDialer(policy, Options{})
	addr := "127.0.0.1:" + itoa(srv.port())

	_, err := d.net.DialContext(context.Background(), "tcp", addr)
	var denied *DeniedError
	if !errors.As(err, &denied) {
		t.Fatalf("err = %v, want a refusal from the Control hook", err)
	}
	if n := srv.accepted(); n != 0 {
		t.Fatalf("%d connection(s) reached the server", n)
	}

	ctx := context.WithValue(context.Background(), allowedHostKey{}, true)
	conn, err := d.net.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatalf("a dial for an allowed host name was refused: %v", err)
	}
	conn.Close()
}

func TestEnvironmentProxyIsIgnored(t *testing.T) {
	proxy := startServer(t, "127.0.0.1:0", nil)
	target := startServer(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("direct"))
	}))
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	policy, _ := ParsePolicy([]string{"127.0.0.1"}, []int{target.port()})
	if NewTransport(policy, Options{}).Proxy != nil {
		t.Fatal("the transport has a proxy function")
	}
	mustGet(t, NewClient(policy, Options{}), target.URL, "direct")
	if n := proxy.accepted(); n != 0 {
		t.Fatalf("%d connection(s) went to the environment's proxy", n)
	}
}

func TestCheckURLRefusesOtherSchemes(t *testing.T) {
	for _, url := range []string{"file:///etc/passwd", "gopher://example.com/", "ftp://example.com/"} {
		err := CheckURL(context.Background(), Policy{}, Options{}, url)
		var denied *DeniedError
		if !errors.As(err, &denied) || !strings.Contains(err.Error(), "only http and https") {
			t.Errorf("CheckURL(%s) = %v, want a scheme refusal", url, err)
		}
	}
}

func mustGet(t *testing.T, c *http.Client, url, want string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if string(body) != want {
		t.Fatalf("GET %s: body %q, want %q", url, body, want)
	}
}

// resolverFunc adapts a function to Resolver.
type resolverFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

func (f resolverFunc) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return f(ctx, network, host)
}

func TestALookupFailureDoesNotNameTheResolver(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"an unknown host", &net.DNSError{Err: "no such host", Name: "nope.example", Server: "10.255.255.53:53", IsNotFound: true}, "cannot resolve nope.example: no such host"},
		{"a timeout", &net.DNSError{Err: "i/o timeout", Name: "nope.example", Server: "10.255.255.53:53", IsTimeout: true}, "cannot resolve nope.example: the lookup timed out"},
		{"any other failure", errors.New("read udp 10.0.0.2:5353->10.255.255.53:53: connection refused"), "cannot resolve nope.example"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := resolverFunc(func(context.Context, string, string) ([]netip.Addr, error) { return nil, tc.err })
			client := NewClient(Policy{}, Options{Resolver: res})
			_, err := client.Get("https://nope.example/x")
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "10.255.255.53") || strings.Contains(err.Error(), "10.0.0.2") {
				t.Errorf("error %q should say %q and name no resolver address", err, tc.want)
			}
			var le *LookupError
			if !errors.As(err, &le) || !errors.Is(le, tc.err) {
				t.Errorf("the resolver's error is not kept for logs: %v", err)
			}
		})
	}
}
