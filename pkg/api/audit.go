package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// auditLog: GET /v1/tenants/{tenant}/audit-log?action=&actor=&since=&cursor=&limit=,
// newest first.
func (s *server) auditLog(c *gin.Context) {
	opts, err := listOptions(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	f := platform.AuditFilter{Action: c.Query("action"), Actor: c.Query("actor")}
	if since := c.Query("since"); since != "" {
		if f.Since, err = time.Parse(time.RFC3339, since); err != nil {
			s.fail(c, badRequest("/since", "must be an RFC 3339 time such as 2030-01-31T00:00:00Z"))
			return
		}
	}
	entries, next, err := s.platform.AuditLog().List(c.Request.Context(), principal(c), c.Param("tenant"), f, opts)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.AuditLog{Entries: entries, NextCursor: next})
}
