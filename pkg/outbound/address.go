package outbound

import (
	"net/netip"

	"code.dny.dev/ssrf"
)

// namedRange labels a special-purpose range so a refusal can say why.
type namedRange struct {
	prefix netip.Prefix
	reason string
}

// specialRanges are checked in order, most specific first, so the cloud
// metadata addresses are named as such rather than as link-local or private.
// The list only names ranges; the decision also consults the ssrf package's
// IANA-derived deny lists and its "IPv6 outside 2000::/3 is never public"
// rule, so a range missing here is still denied, just with a vaguer reason.
var specialRanges = func() []namedRange {
	table := []struct{ cidr, reason string }{
		{"169.254.169.254/32", "the cloud metadata address"},
		{"fd00:ec2::254/128", "the cloud metadata address"},
		{"127.0.0.0/8", "a loopback address"},
		{"::1/128", "a loopback address"},
		{"10.0.0.0/8", "a private address"},
		{"172.16.0.0/12", "a private address"},
		{"192.168.0.0/16", "a private address"},
		{"fc00::/7", "a private address"},
		{"169.254.0.0/16", "a link-local address"},
		{"fe80::/10", "a link-local address"},
		{"100.64.0.0/10", "a carrier-grade NAT address"},
		{"224.0.0.0/4", "a multicast address"},
		{"ff00::/8", "a multicast address"},
		{"255.255.255.255/32", "the broadcast address"},
		{"0.0.0.0/8", "an unspecified address"},
		{"::/128", "an unspecified address"},
		{"::ffff:0:0/96", "an IPv4-mapped address"},
		{"::/96", "an IPv4-compatible address"},
		{"::ffff:0:0:0/96", "an IPv4-translated address"},
		{"64:ff9b::/96", "an IPv4/IPv6 translation (NAT64) address"},
		{"64:ff9b:1::/48", "an IPv4/IPv6 translation (NAT64) address"},
		{"2002::/16", "a 6to4 address"},
		{"2001::/32", "a Teredo address"},
		{"100::/64", "a discard-only address"},
		{"192.0.0.0/24", "an IETF protocol assignment address"},
		{"2001::/23", "an IETF protocol assignment address"},
		{"192.0.2.0/24", "a documentation address"},
		{"198.51.100.0/24", "a documentation address"},
		{"203.0.113.0/24", "a documentation address"},
		{"2001:db8::/32", "a documentation address"},
		{"3fff::/20", "a documentation address"},
		{"198.18.0.0/15", "a benchmarking address"},
		{"240.0.0.0/4", "a reserved address"},
	}
	ranges := make([]namedRange, len(table))
	for i, r := range table {
		ranges[i] = namedRange{netip.MustParsePrefix(r.cidr), r.reason}
	}
	return ranges
}()

// guardian holds the ssrf package's deny lists; ports and networks are
// checked by this package so their errors can name the settings to change.
var guardian = ssrf.New(ssrf.WithAnyPort(), ssrf.WithAnyNetwork())

// denyReason returns why addr may not be reached, or "" when it may.
// AllowCIDRs win over every deny rule.
func (p Policy) denyReason(addr netip.Addr) string {
	addr = addr.WithZone("")
	if p.cidrAllowed(addr) {
		return ""
	}
	if addr.Is4In6() {
		// Name what the mapped address really points at: "::ffff:127.0.0.1"
		// is a loopback address in disguise.
		if reason := classify(addr.Unmap()); reason != "" {
			return reason
		}
		return "an IPv4-mapped address"
	}
	if reason := classify(addr); reason != "" {
		return reason
	}
	if guardian.SafeAddr(addr) != nil {
		return "a special-purpose address"
	}
	return ""
}

// classify names the special-purpose range addr belongs to, or "".
func classify(addr netip.Addr) string {
	for _, r := range specialRanges {
		if r.prefix.Contains(addr) {
			return r.reason
		}
	}
	return ""
}
