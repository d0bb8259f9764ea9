package outbound

import (
	"net/netip"
	"strconv"
	"strings"
)

// normalizeHost lowercases a URL host and drops one trailing dot, so
// "LOCALHOST." and "localhost" are the same name to every rule.
func normalizeHost(host string) string {
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// parseIP reads host as an IP address the way browsers and the C resolver
// do: besides canonical IPv4 and IPv6 it accepts the legacy inet_aton forms
// ("2130706433", "0177.0.0.1", "0x7f.1", "127.1"). Go's own parser rejects
// those, and a resolver would then turn them into an address behind our
// back; reading them here lets the address rules see the real destination.
func parseIP(host string) (netip.Addr, bool) {
	if addr, err := netip.ParseAddr(host); err == nil {
		return addr, true
	}
	return parseLegacyIPv4(host)
}

// parseLegacyIPv4 parses one to four dot-separated numbers, each decimal,
// octal (leading 0) or hexadecimal (leading 0x); the last number fills the
// remaining bytes.
func parseLegacyIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var nums [4]uint64
	for i, part := range parts {
		n, ok := parseLegacyNumber(part)
		if !ok {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	last := len(parts) - 1
	var value uint64
	for i := range last {
		if nums[i] > 0xff {
			return netip.Addr{}, false
		}
		value |= nums[i] << (8 * (3 - i))
	}
	if nums[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	value |= nums[last]
	return netip.AddrFrom4([4]byte{byte(value >> 24), byte(value >> 16), byte(value >> 8), byte(value)}), true
}

func parseLegacyNumber(s string) (uint64, bool) {
	base := 10
	switch {
	case s == "":
		return 0, false
	case strings.HasPrefix(s, "0x"), strings.HasPrefix(s, "0X"):
		s, base = s[2:], 16
		if s == "" {
			return 0, true
		}
	case len(s) > 1 && s[0] == '0':
		s, base = s[1:], 8
	}
	n, err := strconv.ParseUint(s, base, 32)
	return n, err == nil
}

// isLocalhostName reports names that RFC 6761 reserves for the local
// machine; they are refused before any lookup.
func isLocalhostName(host string) bool {
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}
