package api

import (
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/gin-gonic/gin"
)

// adminCSP is the Content-Security-Policy of the admin UI and the widget
// demo: their scripts, styles and API calls come from this server only, so
// an injected inline script or a foreign resource is refused by the
// browser, and no other site may frame the pages (clickjacking).
const adminCSP = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// loadLanding reads the landing page once at start, so a missing file is a
// start-up error rather than a 500 on every visit.
func loadLanding(files fs.FS) ([]byte, error) {
	if files == nil {
		return nil, nil
	}
	b, err := fs.ReadFile(files, "index.html")
	if err != nil {
		return nil, fmt.Errorf("api: landing page: %w", err)
	}
	return b, nil
}

// landing: GET / serves the embedded landing page.
func (s *server) landing(c *gin.Context) {
	if s.landingPage == nil {
		writeError(c, errNotFound)
		return
	}
	c.Header("X-Content-Type-Options", "nosniff")
	c.Data(http.StatusOK, "text/html; charset=utf-8", s.landingPage)
}

// static serves the embedded admin UI (/admin/...), the chat widget
// (/widget.js), the Markdown renderer both use (/markdown.js) and the
// widget's demo page. It is the fallback for paths no API route
// matches, rather than routes of its own, so the API's route table (and
// the isolation test that walks it) stays the API.
func (s *server) static(c *gin.Context) {
	r := c.Request
	if s.web == nil || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		writeError(c, errNotFound)
		return
	}
	if r.URL.Path == "/admin" {
		c.Redirect(http.StatusMovedPermanently, "/admin/")
		return
	}
	name, ok := staticName(r.URL.Path)
	if !ok {
		writeError(c, errNotFound)
		return
	}
	if st, err := fs.Stat(s.web, name); err != nil || st.IsDir() {
		writeError(c, errNotFound)
		return
	}
	h := c.Writer.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	// Other sites never learn our pages' addresses (the demo page's holds
	// a key), but our own API does: the widget on the demo page reads its
	// dialog back with a same-origin GET, which carries no Origin, and its
	// Referer is how the key's origin binding knows the page (browserOrigin).
	h.Set("Referrer-Policy", "same-origin")
	if name == "widget.js" || name == "markdown.js" || name == "widget-demo.js" {
		// Other sites load the widget; say so for pages that require it
		// (Cross-Origin-Embedder-Policy).
		h.Set("Cross-Origin-Resource-Policy", "cross-origin")
		h.Set("Cache-Control", "public, max-age=300")
	} else {
		h.Set("Content-Security-Policy", adminCSP)
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-cache")
	}
	http.ServeFileFS(c.Writer, r, s.web, name)
}

// staticName maps a URL path to a file of the embedded tree: the admin UI's
// files and its vendored code editor, the widget, its Markdown renderer and its demo page. Anything else is not served, so the
// tree cannot grow public files by accident.
func staticName(urlPath string) (string, bool) {
	switch urlPath {
	case "/widget.js", "/markdown.js", "/widget-demo.html", "/widget-demo.js":
		return strings.TrimPrefix(urlPath, "/"), true
	case "/admin/":
		return "admin/index.html", true
	case "/vendor/codemirror.js": // the admin UI's code editor (scripts/build-codemirror.sh)
		return "vendor/codemirror.js", true
	}
	if !strings.HasPrefix(urlPath, "/admin/") {
		return "", false
	}
	clean := path.Clean(urlPath)
	if clean != urlPath || strings.HasSuffix(clean, "/index.html") {
		return "", false
	}
	return strings.TrimPrefix(clean, "/"), true
}
