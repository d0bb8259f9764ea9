package outbound

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultMaxRedirects is how many same-origin redirects a client follows.
const DefaultMaxRedirects = 5

// Options tune a client without touching the policy. The zero value is
// ready to use.
type Options struct {
	// Resolver looks up host names; nil uses the system resolver.
	Resolver Resolver
	// Timeout bounds a whole request including redirects and reading the
	// body; 0 leaves it to the caller's context.
	Timeout time.Duration
	// DialTimeout bounds one TCP connect; 0 means 10 seconds.
	DialTimeout time.Duration
	// MaxRedirects caps same-origin redirects; 0 means DefaultMaxRedirects,
	// a negative value refuses every redirect.
	MaxRedirects int
}

func (o Options) dialTimeout() time.Duration {
	if o.DialTimeout > 0 {
		return o.DialTimeout
	}
	return 10 * time.Second
}

func (o Options) maxRedirects() int {
	if o.MaxRedirects == 0 {
		return DefaultMaxRedirects
	}
	return max(o.MaxRedirects, 0)
}

// NewClient returns the HTTP client for tenant-controlled URLs: every
// connection is checked against p at dial time, the environment's proxy is
// ignored (a proxy would dial on our behalf, past the checks), and only
// same-origin redirects are followed. It is the one way Parley reaches a URL
// a tenant wrote; share one client per policy so connections are pooled.
func NewClient(p Policy, o Options) *http.Client {
	return &http.Client{
		Transport:     NewTransport(p, o),
		CheckRedirect: sameOriginRedirects(o.maxRedirects()),
		Timeout:       o.Timeout,
	}
}

// NewTransport returns the policy-checking transport under NewClient, for
// libraries that take an http.RoundTripper. It does not police redirects:
// prefer NewClient.
func NewTransport(p Policy, o Options) *http.Transport {
	d := newDialer(p, o)
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    10,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
}

// CheckURL reports whether rawURL's destination is allowed right now, for
// early feedback (e.g. when a config is saved). It is advisory: DNS may
// answer differently later, which is why every dial is checked again.
func CheckURL(ctx context.Context, p Policy, o Options, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("outbound: %s is not a URL", StripURL(rawURL))
	}
	if err := checkScheme(u); err != nil {
		return err
	}
	_, _, err = newDialer(p, o).resolve(ctx, "tcp", hostPort(u))
	return err
}

// sameOriginRedirects follows a redirect only to the origin (scheme, host
// and port) of the first request: a tenant's API may move a path, but a
// redirect elsewhere could carry the tenant's credentials to a third party.
func sameOriginRedirects(limit int) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		to := StripURL(req.URL.String())
		if len(via) > limit {
			return &RedirectError{To: to, Reason: fmt.Sprintf("more than %d redirects", limit)}
		}
		if origin(req.URL) != origin(via[0].URL) {
			return &RedirectError{To: to, Reason: "only same-origin redirects are followed"}
		}
		return nil
	}
}

// origin is scheme://host:port with the default port made explicit.
func origin(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + hostPort(u)
}

// hostPort returns the URL's normalised host with its port, defaulting the
// port from the scheme.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if strings.EqualFold(u.Scheme, "https") {
			port = "443"
		}
	}
	return net.JoinHostPort(normalizeHost(u.Hostname()), port)
}

func checkScheme(u *url.URL) error {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return nil
	}
	return &DeniedError{Host: u.Hostname(), Reason: fmt.Sprintf("uses scheme %q; only http and https are allowed", u.Scheme)}
}
