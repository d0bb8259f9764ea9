package outbound

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// DeniedError is a destination the policy refuses. Its message is safe to
// show a tenant: it names the host they wrote, never an address their host
// name resolved to (that would map the operator's internal DNS for them).
type DeniedError struct {
	// Host is the URL's host as written, normalised.
	Host string
	// Addr is the refused address, when the refusal is about an address.
	// Log it for the operator; it is not part of Error().
	Addr netip.Addr
	// Port is the destination port.
	Port int
	// Reason completes "destination X is ...".
	Reason string
	// Setting names the environment variable that would open an exception.
	Setting string
	// Allow is every setting, with its value, that together would let
	// this destination through ("PARLEY_OUTBOUND_ALLOW=127.0.0.1/32",
	// "PARLEY_OUTBOUND_PORTS=8081"): a refused port of a private address
	// needs both, and naming one at a time sends people round twice.
	Allow []string
}

// Error says what was refused, why, and which settings would allow it.
// Only the operator can change them: a tenant never widens the policy.
func (e *DeniedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "destination %s %s", e.Host, e.Reason)
	switch {
	case len(e.Allow) > 0:
		fmt.Fprintf(&b, "; ask the operator to allow it with %s (added to what those settings already list)", strings.Join(e.Allow, " "))
	case e.Setting != "":
		fmt.Fprintf(&b, "; ask the operator to allow it in %s", e.Setting)
	}
	return b.String()
}

// RedirectError is a redirect the client refused to follow.
type RedirectError struct {
	// To is the redirect target without its query string or fragment.
	To string
	// Reason says why it was refused.
	Reason string
}

// Error names the stripped target and the reason.
func (e *RedirectError) Error() string {
	return fmt.Sprintf("redirect to %s refused: %s", e.To, e.Reason)
}

// CleanError returns err with every URL in it stripped of user info, query
// string and fragment, which may hold secrets (API keys in query strings are
// common). Use it before an error from an outbound client reaches a log, an
// event or the model.
func CleanError(err error) error {
	if err == nil {
		return nil
	}
	var uerr *url.Error
	if !errors.As(err, &uerr) {
		return err
	}
	return &url.Error{Op: uerr.Op, URL: StripURL(uerr.URL), Err: uerr.Err}
}

// StripURL returns raw without user info, query string and fragment, for
// messages. Unparsable input is reduced to what precedes any '?' or '#'.
func StripURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.IndexAny(raw, "?#"); i >= 0 {
			raw = raw[:i]
		}
		if i := strings.LastIndex(raw, "@"); i >= 0 {
			if j := strings.Index(raw, "://"); j >= 0 && j < i {
				raw = raw[:j+3] + raw[i+1:]
			}
		}
		return raw
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// LookupError is a failed name lookup. Its text says only why in general
// terms: the resolver's own error names the server's DNS resolver address,
// which tool results would otherwise show tenants. Unwrap gives the detail
// for logs.
type LookupError struct {
	Host string
	Err  error
}

func newLookupError(host string, err error) *LookupError { return &LookupError{Host: host, Err: err} }

func (e *LookupError) Error() string {
	var dns *net.DNSError
	switch {
	case errors.As(e.Err, &dns) && dns.IsNotFound:
		return "outbound: cannot resolve " + e.Host + ": no such host"
	case errors.As(e.Err, &dns) && dns.IsTimeout:
		return "outbound: cannot resolve " + e.Host + ": the lookup timed out"
	default:
		return "outbound: cannot resolve " + e.Host
	}
}

func (e *LookupError) Unwrap() error { return e.Err }
