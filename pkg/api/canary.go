package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// setCanary: PUT /v1/tenants/{tenant}/bots/{bot}/canary {version, percent}.
func (s *server) setCanary(c *gin.Context) {
	var req apiclient.SetCanaryRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	b, err := s.platform.Versions().SetCanary(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("bot"), req.Version, req.Percent)
	s.botAnswer(c, b, err)
}

// dropCanary: DELETE /v1/tenants/{tenant}/bots/{bot}/canary.
func (s *server) dropCanary(c *gin.Context) {
	b, err := s.platform.Versions().DropCanary(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("bot"))
	s.botAnswer(c, b, err)
}

// promoteCanary: POST /v1/tenants/{tenant}/bots/{bot}/canary/promote.
func (s *server) promoteCanary(c *gin.Context) {
	b, err := s.platform.Versions().PromoteCanary(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("bot"))
	s.botAnswer(c, b, err)
}

// getCanary: GET /v1/tenants/{tenant}/bots/{bot}/canary, with the usage of
// the canary and of the live version.
func (s *server) getCanary(c *gin.Context) {
	cn, err := s.platform.Versions().GetCanary(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("bot"))
	if err != nil {
		s.fail(c, err)
		return
	}
	usage := func(u platform.VersionUsage) apiclient.VersionUsage {
		return apiclient.VersionUsage{Version: u.Version, Dialogs: u.Dialogs, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
	}
	c.JSON(http.StatusOK, apiclient.Canary{Version: cn.Version, Percent: cn.Percent, Live: usage(cn.Live), Canary: usage(cn.Canary)})
}

func (s *server) botAnswer(c *gin.Context, b platform.Bot, err error) {
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, botOut(b))
}
