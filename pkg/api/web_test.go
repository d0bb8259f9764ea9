package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/store/storetest"
)

func TestStaticFilesAreServedWithTheirHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.OpenSQLite(t))
	cases := []struct {
		name, path, contentType, body string
		csp                           bool
	}{
		{"the admin UI's page has a strict CSP", "/admin/", "text/html", `<div id="app">`, true},
		{"the admin UI's modules are JavaScript", "/admin/js/app.js", "text/javascript", "import", true},
		{"the admin UI's stylesheet is CSS", "/admin/admin.css", "text/css", ":root", true},
		{"the widget is JavaScript other sites load", "/widget.js", "text/javascript", "attachShadow", false},
		{"the Markdown renderer is JavaScript other sites load", "/markdown.js", "text/javascript", "noopener noreferrer", false},
		{"the widget demo page has a strict CSP", "/widget-demo.html", "text/html", "/widget-demo.js", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.raw(t, "GET", tc.path, "", "")
			if r.StatusCode != http.StatusOK {
				t.Fatalf("status %d; want 200", r.StatusCode)
			}
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, tc.contentType) {
				t.Errorf("Content-Type %q; want %s", ct, tc.contentType)
			}
			if !strings.Contains(r.body, tc.body) {
				t.Errorf("body lacks %q", tc.body)
			}
			if r.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("X-Content-Type-Options %q; want nosniff", r.Header.Get("X-Content-Type-Options"))
			}
			csp := r.Header.Get("Content-Security-Policy")
			if tc.csp && !strings.HasPrefix(csp, "default-src 'self'") {
				t.Errorf("Content-Security-Policy %q; want default-src 'self'", csp)
			}
			if tc.csp && strings.Contains(csp, "unsafe-inline") {
				t.Errorf("Content-Security-Policy %q allows inline code", csp)
			}
		})
	}
}

func TestStaticFallbackServesNothingElse(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.OpenSQLite(t))
	cases := []struct {
		name, method, path string
		status             int
		landsOn            string // the path after redirects, when not path
	}{
		{"an unknown path is a JSON 404", "GET", "/nothing-here", http.StatusNotFound, ""},
		{"an unknown admin file is a 404", "GET", "/admin/missing.js", http.StatusNotFound, ""},
		{"a folder of the admin UI is not listed", "GET", "/admin/js/", http.StatusNotFound, ""},
		{"a path climbing out of the admin UI is refused", "GET", "/admin/../index.html", http.StatusNotFound, ""},
		{"the embedded tree's own files are not served by name", "GET", "/index.html", http.StatusNotFound, ""},
		{"posting to a static file is a 404", "POST", "/widget.js", http.StatusNotFound, ""},
		{"/admin without its slash leads to /admin/", "GET", "/admin", http.StatusOK, "/admin/"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.raw(t, tc.method, tc.path, "", "")
			if r.StatusCode != tc.status {
				t.Fatalf("status %d; want %d", r.StatusCode, tc.status)
			}
			if tc.landsOn != "" && r.Request.URL.Path != tc.landsOn {
				t.Errorf("landed on %s; want %s", r.Request.URL.Path, tc.landsOn)
			}
			if tc.status == http.StatusNotFound && !strings.Contains(r.body, `"not_found"`) {
				t.Errorf("body %q; want the API's not_found error", r.body)
			}
		})
	}
}

// BenchmarkWidgetScript measures serving /widget.js, which every page of
// every site embedding the widget loads (browsers cache it five minutes).
func BenchmarkWidgetScript(b *testing.B) {
	e := newEnv(b, storetest.OpenSQLite(b))
	req := httptest.NewRequest("GET", "/widget.js", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}
