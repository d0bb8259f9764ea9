package tool

import (
	"fmt"
	"unicode/utf8"
)

// Truncate cuts s to at most max bytes on a rune boundary and says so at the
// end, so the model knows the output is incomplete. It reports whether it cut.
func Truncate(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[truncated: %d of %d bytes shown]", cut, len(s)), true
}
