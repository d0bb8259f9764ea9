package mcptool_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/tool/mcptool"
)

var validToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestExposedNamesFitTheProviderRules(t *testing.T) {
	long := strings.Repeat("x", 70)
	cases := []struct {
		name, server, tool, want string
	}{
		{"a plain name is server and tool joined by two underscores", "docs", "search", "docs__search"},
		{"characters outside the allowed set become underscores", "docs", "files.read/v2", "docs__files_read_v2"},
		{"dashes and digits are kept", "crm-2", "get-sum", "crm-2__get-sum"},
		{"a name of exactly 64 characters is kept whole", "s", strings.Repeat("t", 61), "s__" + strings.Repeat("t", 61)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := mcptool.ExposedName(tc.server, tc.tool); got != tc.want {
				t.Errorf("ExposedName(%q, %q) = %q, want %q", tc.server, tc.tool, got, tc.want)
			}
		})
	}
	t.Run("a long name is cut to 64 characters with a hash that keeps it distinct", func(t *testing.T) {
		a := mcptool.ExposedName("docs", long+"a")
		b := mcptool.ExposedName("docs", long+"b")
		for _, n := range []string{a, b} {
			if !validToolName.MatchString(n) {
				t.Errorf("%q does not match %s", n, validToolName)
			}
			if !strings.HasPrefix(n, "docs__xxx") {
				t.Errorf("%q lost its readable prefix", n)
			}
		}
		if a == b {
			t.Errorf("two long names that differ only at the end both became %q", a)
		}
	})
	t.Run("a name made only of invalid characters still matches the pattern", func(t *testing.T) {
		if n := mcptool.ExposedName("ü", "..."); !validToolName.MatchString(n) {
			t.Errorf("%q does not match %s", n, validToolName)
		}
	})
}
