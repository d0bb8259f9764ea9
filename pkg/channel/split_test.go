package channel_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/channel"
)

func TestSplitKeepsEveryPartWithinTheLimit(t *testing.T) {
	cases := []struct {
		name string
		text string
		want []string
	}{
		{"a short text is one part", "hello", []string{"hello"}},
		{"a text cuts at its last line break in the second half", "aaaa\nbbbb\ncc", []string{"aaaa\nbbbb", "cc"}},
		{"without a line break it cuts at a space", "aaaa bbbb cc", []string{"aaaa bbbb", "cc"}},
		{"a word longer than the limit is cut hard", "abcdefghijklmnop", []string{"abcdefghij", "klmnop"}},
		{"characters count, not bytes", strings.Repeat("é", 15), []string{strings.Repeat("é", 10), strings.Repeat("é", 5)}},
		{"an empty text is one empty part", "", []string{""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := channel.Split(tc.text, 10)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("Split = %q, want %q", got, tc.want)
			}
			for _, p := range got {
				if utf8.RuneCountInString(p) > 10 || !utf8.ValidString(p) {
					t.Fatalf("part %q is over the limit or cut inside a character", p)
				}
			}
		})
	}
}
