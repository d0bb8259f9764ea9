package tool

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		max     int
		want    string
		wantCut bool
	}{
		{"text within the limit is untouched", "hello", 5, "hello", false},
		{"longer text is cut and marked", "hello world", 5, "hello\n[truncated: 5 of 11 bytes shown]", true},
		{"a cut never splits a rune", "héllo", 2, "h\n[truncated: 1 of 6 bytes shown]", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, cut := Truncate(tc.in, tc.max)
			if got != tc.want || cut != tc.wantCut {
				t.Errorf("Truncate(%q, %d) = %q, %v; want %q, %v", tc.in, tc.max, got, cut, tc.want, tc.wantCut)
			}
			if !utf8.ValidString(strings.SplitN(got, "\n[truncated", 2)[0]) {
				t.Errorf("cut text %q is not valid UTF-8", got)
			}
		})
	}
}
