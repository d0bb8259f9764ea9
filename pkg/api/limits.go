package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// getLimits: GET /v1/tenants/{tenant}/limits.
func (s *server) getLimits(c *gin.Context) {
	l, err := s.platform.Limits().Get(c.Request.Context(), principal(c), c.Param("tenant"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, l)
}

// putLimits: PUT /v1/tenants/{tenant}/limits (the platform token only).
func (s *server) putLimits(c *gin.Context) {
	var req apiclient.TenantLimits
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	l, err := s.platform.Limits().Put(c.Request.Context(), principal(c), c.Param("tenant"), req)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, l)
}
