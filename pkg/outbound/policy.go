package outbound

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// DefaultMaxBodyBytes is the response size callers keep when a Policy does
// not say otherwise.
const DefaultMaxBodyBytes = 64 << 10

// defaultPorts are the only ports reachable without PARLEY_OUTBOUND_PORTS.
var defaultPorts = []int{80, 443}

// Policy is the operator's outbound rules: which otherwise denied
// destinations tenants may reach and on which ports.
//
// Precedence, applied on every dial (also after each redirect):
//  1. the scheme must be http or https;
//  2. the port must be 80, 443 or one of ExtraPorts (no exception lifts this);
//  3. a host name matching AllowHosts is let through without address checks;
//  4. localhost names (localhost, *.localhost) are denied;
//  5. every resolved address must be in AllowCIDRs or not special-purpose
//     (loopback, private, link-local, CGNAT, multicast, ...); one denied
//     address denies the whole name, so a mixed answer cannot slip through.
type Policy struct {
	// AllowCIDRs are address ranges reachable despite the special-purpose
	// block, e.g. an internal API network.
	AllowCIDRs []netip.Prefix
	// AllowHosts are host names reachable whatever they resolve to; lower
	// case, no trailing dot. "*.corp.example" matches every subdomain of
	// corp.example (not corp.example itself).
	AllowHosts []string
	// ExtraPorts are reachable besides 80 and 443.
	ExtraPorts []int
	// MaxBodyBytes caps response bodies read with ReadBody by tools that
	// use this policy; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
}

// ParsePolicy builds a Policy from PARLEY_OUTBOUND_ALLOW entries (CIDRs, IP
// addresses or host names) and PARLEY_OUTBOUND_PORTS numbers. It reports the
// first malformed entry.
func ParsePolicy(allow []string, ports []int) (Policy, error) {
	var p Policy
	for _, raw := range allow {
		entry := strings.ToLower(strings.TrimSpace(raw))
		if entry == "" {
			continue
		}
		if prefix, ok := parsePrefix(entry); ok {
			p.AllowCIDRs = append(p.AllowCIDRs, prefix)
			continue
		}
		host := strings.TrimSuffix(entry, ".")
		if !validHostPattern(host) {
			return Policy{}, fmt.Errorf("PARLEY_OUTBOUND_ALLOW: %q is neither a CIDR, an IP address nor a host name", raw)
		}
		p.AllowHosts = append(p.AllowHosts, host)
	}
	for _, port := range ports {
		if port < 1 || port > 65535 {
			return Policy{}, fmt.Errorf("PARLEY_OUTBOUND_PORTS: %d is not a port number", port)
		}
		p.ExtraPorts = append(p.ExtraPorts, port)
	}
	return p, nil
}

// BodyLimit returns MaxBodyBytes, or DefaultMaxBodyBytes when unset.
func (p Policy) BodyLimit() int64 {
	if p.MaxBodyBytes > 0 {
		return p.MaxBodyBytes
	}
	return DefaultMaxBodyBytes
}

// parsePrefix accepts "10.0.0.0/8", "fd00::/8" and bare addresses, which
// mean exactly that address.
func parsePrefix(s string) (netip.Prefix, bool) {
	if strings.Contains(s, "/") {
		prefix, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, false
		}
		return prefix.Masked(), true
	}
	addr, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(addr, addr.BitLen()), true
}

// validHostPattern accepts DNS names, optionally with a leading "*." label.
func validHostPattern(host string) bool {
	host = strings.TrimPrefix(host, "*.")
	if host == "" || len(host) > 253 {
		return false
	}
	for label := range strings.SplitSeq(host, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// portAllowed reports whether port is 80, 443 or an extra port.
func (p Policy) portAllowed(port int) bool {
	return slices.Contains(defaultPorts, port) || slices.Contains(p.ExtraPorts, port)
}

// hostAllowed reports whether the normalised host name matches AllowHosts.
func (p Policy) hostAllowed(host string) bool {
	for _, pattern := range p.AllowHosts {
		if suffix, wild := strings.CutPrefix(pattern, "*"); wild {
			if strings.HasSuffix(host, suffix) && len(host) > len(suffix) {
				return true
			}
			continue
		}
		if host == pattern {
			return true
		}
	}
	return false
}

// cidrAllowed reports whether addr (or the IPv4 address it maps) is in
// AllowCIDRs.
func (p Policy) cidrAllowed(addr netip.Addr) bool {
	for _, prefix := range p.AllowCIDRs {
		if prefix.Contains(addr) || (addr.Is4In6() && prefix.Contains(addr.Unmap())) {
			return true
		}
	}
	return false
}

// portList renders the allowed ports for error messages.
func (p Policy) portList() string {
	ports := append(slices.Clone(defaultPorts), p.ExtraPorts...)
	slices.Sort(ports)
	parts := make([]string, 0, len(ports))
	for _, port := range slices.Compact(ports) {
		parts = append(parts, strconv.Itoa(port))
	}
	return strings.Join(parts, ", ")
}
