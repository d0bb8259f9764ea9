package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// getLimits: GET /v1/tenants/{tenant}/limits.
func (s *server) getLimits(c *gin.Context) {
	l, err := s.platform.Limits().Get(c.Request.Context(), principal(c), c.Param("tenant"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, limitsOut(l))
}

// putLimits: PUT /v1/tenants/{tenant}/limits (the platform token only).
func (s *server) putLimits(c *gin.Context) {
	var req apiclient.TenantLimits
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	l, err := s.platform.Limits().Put(c.Request.Context(), principal(c), c.Param("tenant"),
		platform.TenantLimits{DailyTokenQuota: req.DailyTokenQuota, RatePerSecond: req.RatePerSecond, RateBurst: req.RateBurst})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, limitsOut(l))
}

func limitsOut(l platform.TenantLimits) apiclient.TenantLimits {
	return apiclient.TenantLimits{DailyTokenQuota: l.DailyTokenQuota, RatePerSecond: l.RatePerSecond, RateBurst: l.RateBurst}
}
