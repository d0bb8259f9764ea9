package webtest

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// TestProblemPointersNameTheirLine checks the admin UI's pointer.js, which
// turns a validation problem's JSON pointer into the editor line to jump
// to, in the browser that runs it.
func TestProblemPointersNameTheirLine(t *testing.T) {
	t.Parallel()
	w := newWorld(t, storetest.OpenSQLite(t))
	ctx := tab(t, browser(t))
	run(t, ctx, "load", chromedp.Navigate(w.api.URL+"/admin/"), chromedp.WaitVisible(chromedp.CSS(`input[name="email"]`)))

	const config = `{
  "basic_settings": {"name": "Acme"},
  "tools": [
    {"name": "a"},
    {
      "name": "b",
      "endpoint": {"url": "https://x.example/<id>", "headers": {"a/b": "1", "t~x": "2"}}
    }
  ],
  "mcp_servers": []
}`
	cases := []struct {
		name, pointer string
		line          int
	}{
		{"the whole document is line 1", "", 1},
		{"a member names the line of its key", "/basic_settings/name", 2},
		{"an array element names the line it starts on", "/tools/1", 5},
		{"a member of an element inside an array is found", "/tools/1/endpoint/url", 7},
		{"an escaped slash in a key is matched", "/tools/1/endpoint/headers/a~1b", 7},
		{"an escaped tilde in a key is matched", "/tools/1/endpoint/headers/t~0x", 7},
		{"a missing member points at its parent", "/tools/0/description", 4},
		{"a missing element points at its array", "/mcp_servers/0", 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := eval[int](t, ctx, fmt.Sprintf(`import('/admin/js/pointer.js').then(m => m.lineOf(%s, %s))`, js(config), js(tc.pointer)))
			if got != tc.line {
				t.Errorf("lineOf(%q) = %d; want %d", tc.pointer, got, tc.line)
			}
		})
	}
}
