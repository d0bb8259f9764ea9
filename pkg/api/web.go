package api

import (
	"fmt"
	"io/fs"
	"net/http"

	"github.com/gin-gonic/gin"
)

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
