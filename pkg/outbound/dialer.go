package outbound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// Resolver looks up a host name's addresses. *net.Resolver implements it;
// tests inject their own to play DNS tricks.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// dialer connects only to destinations the policy allows. It resolves
// names itself and dials the checked addresses, so no second lookup can
// swap in another address (DNS rebinding); the net.Dialer's Control hook
// checks the address of the actual connect() once more, whatever path led
// there.
type dialer struct {
	policy   Policy
	resolver Resolver
	net      net.Dialer
}

func newDialer(p Policy, o Options) *dialer {
	d := &dialer{policy: p, resolver: o.Resolver}
	if d.resolver == nil {
		d.resolver = net.DefaultResolver
	}
	d.net = net.Dialer{Timeout: o.dialTimeout(), KeepAlive: 30 * time.Second, ControlContext: d.control}
	return d
}

// allowedHostKey marks a dial whose host name is on AllowHosts, so the
// Control hook lets its addresses through.
type allowedHostKey struct{}

// DialContext is the transport's dial function.
func (d *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	addrs, hostAllowed, err := d.resolve(ctx, network, address)
	if err != nil {
		return nil, err
	}
	if hostAllowed {
		ctx = context.WithValue(ctx, allowedHostKey{}, true)
	}
	var errs []error
	for _, ap := range addrs {
		conn, err := d.net.DialContext(ctx, network, ap.String())
		if err == nil {
			return conn, nil
		}
		if denied := (*DeniedError)(nil); errors.As(err, &denied) || ctx.Err() != nil {
			return nil, err
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// resolve checks host and port and returns the addresses to dial, all
// allowed, and whether the host name itself is on AllowHosts.
func (d *dialer) resolve(ctx context.Context, network, address string) ([]netip.AddrPort, bool, error) {
	host, port, err := splitHostPort(address)
	if err != nil {
		return nil, false, err
	}
	if !d.policy.portAllowed(port) {
		return nil, false, d.portDenied(host, port, d.allowEntry(ctx, network, host))
	}
	if addr, ok := parseIP(host); ok {
		if reason := d.policy.denyReason(addr); reason != "" {
			return nil, false, addrDenied(host, addr, port, "is "+reason, hostPrefix(addr))
		}
		return []netip.AddrPort{netip.AddrPortFrom(addr.WithZone(""), uint16(port))}, false, nil
	}
	hostAllowed := d.policy.hostAllowed(host)
	if !hostAllowed && isLocalhostName(host) {
		return nil, false, &DeniedError{Host: host, Port: port, Reason: "is a local host name", Setting: "PARLEY_OUTBOUND_ALLOW",
			Allow: []string{"PARLEY_OUTBOUND_ALLOW=" + host}}
	}
	found, err := d.resolver.LookupNetIP(ctx, lookupNetwork(network), host)
	if err != nil {
		return nil, false, newLookupError(host, err)
	}
	if len(found) == 0 {
		return nil, false, fmt.Errorf("outbound: %s has no addresses", host)
	}
	addrs := make([]netip.AddrPort, 0, len(found))
	for _, addr := range found {
		if !hostAllowed {
			if reason := d.policy.denyReason(addr); reason != "" {
				// The host name, not the address: naming what it resolved
				// to would map the operator's internal DNS for a tenant.
				return nil, false, addrDenied(host, addr, port, "resolves to "+reason, host)
			}
		}
		addrs = append(addrs, netip.AddrPortFrom(addr.Unmap().WithZone(""), uint16(port)))
	}
	return addrs, hostAllowed, nil
}

// control runs on every connect() with the address actually dialled.
func (d *dialer) control(ctx context.Context, network, address string, _ syscall.RawConn) error {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return &DeniedError{Host: address, Reason: "uses network " + network + ", not TCP"}
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("outbound: bad dial address %q: %w", address, err)
	}
	host := ap.Addr().String()
	if !d.policy.portAllowed(int(ap.Port())) {
		entry := ""
		if d.policy.denyReason(ap.Addr()) != "" {
			entry = hostPrefix(ap.Addr())
		}
		return d.portDenied(host, int(ap.Port()), entry)
	}
	if allowed, _ := ctx.Value(allowedHostKey{}).(bool); allowed {
		return nil
	}
	if reason := d.policy.denyReason(ap.Addr()); reason != "" {
		return addrDenied(host, ap.Addr(), int(ap.Port()), "is "+reason, hostPrefix(ap.Addr()))
	}
	return nil
}

// portDenied refuses a port; allowEntry, when not empty, is the
// PARLEY_OUTBOUND_ALLOW entry the host needs as well.
func (d *dialer) portDenied(host string, port int, allowEntry string) error {
	var allow []string
	if allowEntry != "" {
		allow = append(allow, "PARLEY_OUTBOUND_ALLOW="+allowEntry)
	}
	allow = append(allow, "PARLEY_OUTBOUND_PORTS="+strconv.Itoa(port))
	return &DeniedError{Host: net.JoinHostPort(host, strconv.Itoa(port)), Port: port,
		Reason: "uses a port that is not allowed (allowed: " + d.policy.portList() + ")", Setting: "PARLEY_OUTBOUND_PORTS", Allow: allow}
}

// allowEntry is the PARLEY_OUTBOUND_ALLOW entry host would need once its
// port is allowed, "" when none: an address as a one-address CIDR, a host
// name as itself. A name is looked up only to word this refusal.
func (d *dialer) allowEntry(ctx context.Context, network, host string) string {
	if addr, ok := parseIP(host); ok {
		if d.policy.denyReason(addr) != "" {
			return hostPrefix(addr)
		}
		return ""
	}
	if d.policy.hostAllowed(host) {
		return ""
	}
	if isLocalhostName(host) {
		return host
	}
	found, err := d.resolver.LookupNetIP(ctx, lookupNetwork(network), host)
	if err != nil {
		return ""
	}
	for _, addr := range found {
		if d.policy.denyReason(addr) != "" {
			return host
		}
	}
	return ""
}

// hostPrefix is the CIDR of addr alone: 127.0.0.1/32, ::1/128.
func hostPrefix(addr netip.Addr) string {
	addr = addr.Unmap().WithZone("")
	return netip.PrefixFrom(addr, addr.BitLen()).String()
}

func addrDenied(host string, addr netip.Addr, port int, reason, allowEntry string) error {
	return &DeniedError{Host: host, Addr: addr, Port: port, Reason: reason, Setting: "PARLEY_OUTBOUND_ALLOW",
		Allow: []string{"PARLEY_OUTBOUND_ALLOW=" + allowEntry}}
}

// splitHostPort splits a dial address and normalises the host.
func splitHostPort(address string) (string, int, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return "", 0, fmt.Errorf("outbound: bad address %q: %w", address, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("outbound: bad port in %q", address)
	}
	return normalizeHost(host), port, nil
}

// lookupNetwork maps a dial network to the resolver's "ip", "ip4" or "ip6".
func lookupNetwork(network string) string {
	switch network {
	case "tcp4":
		return "ip4"
	case "tcp6":
		return "ip6"
	default:
		return "ip"
	}
}
