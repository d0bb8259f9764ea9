package outbound

import (
	"fmt"
	"net/netip"
	"testing"
)

// FuzzLegacyIPv4 checks that every spelling a resolver would accept for an
// address reads as that address, so no spelling can slip past the rules.
func FuzzLegacyIPv4(f *testing.F) {
	for _, seed := range []uint32{0, 1, 0x7f000001, 0xa9fea9fe, 0x0a000005, 0xc0a80101, 0xffffffff} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v uint32) {
		want := netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
		a, b, c, d := v>>24, v>>16&0xff, v>>8&0xff, v&0xff
		spellings := []string{
			fmt.Sprintf("%d", v),
			fmt.Sprintf("0x%x", v),
			fmt.Sprintf("0%o", v),
			fmt.Sprintf("%d.%d.%d.%d", a, b, c, d),
			fmt.Sprintf("0x%x.0x%x.0x%x.0x%x", a, b, c, d),
			fmt.Sprintf("0%o.0%o.0%o.0%o", a, b, c, d),
			fmt.Sprintf("%d.%d", a, v&0xffffff),
			fmt.Sprintf("%d.%d.%d", a, b, v&0xffff),
			fmt.Sprintf("0x%x.%d.0%o", a, b, v&0xffff),
		}
		for _, s := range spellings {
			got, ok := parseIP(s)
			if !ok || got != want {
				t.Errorf("parseIP(%q) = %v, %v; want %v", s, got, ok, want)
			}
		}
	})
}
