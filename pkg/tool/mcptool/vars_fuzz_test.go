package mcptool_test

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/tool/mcptool"
)

// FuzzSubstitute checks the header and env substitution never panics, leaves
// text without placeholders or escapes untouched, and fills known variables.
func FuzzSubstitute(f *testing.F) {
	for _, seed := range []string{
		"Bearer {{secrets.token}}", "{{ dialog_id }}", "{{{{literal}}", "a <<b> c", "{{", "{{}}", "<x>",
		"{{secrets.token}}{{dialog_id}}", "plain", "", "}}{{dialog_id}}{{",
	} {
		f.Add(seed)
	}
	vars := map[string]string{"secrets.token": "T0K", "dialog_id": "d-1"}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := mcptool.Substitute(s, vars)
		if !strings.Contains(s, "{{") && !strings.Contains(s, "<") {
			if err != nil || out != s {
				t.Fatalf("Substitute(%q) = %q, %v; want the text unchanged", s, out, err)
			}
		}
		if err == nil && strings.Contains(s, "{{secrets.token}}") && !strings.Contains(s, "{{{{") && !strings.Contains(out, "T0K") {
			t.Fatalf("Substitute(%q) = %q lost the secret", s, out)
		}
	})
}
