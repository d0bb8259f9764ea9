package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// createBot: POST /v1/tenants/{tenant}/bots -> the bot and its version 1.
// An invalid config is a 422 whose details point into the config.
func (s *server) createBot(c *gin.Context) {
	var req apiclient.CreateBotRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	b, v, err := s.platform.Bots().CreateWithTests(c.Request.Context(), principal(c), c.Param("tenant"), req.Slug, req.Config, req.Tests)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, apiclient.BotWithVersion{Bot: botOut(b), Version: versionOut(v)})
}

// listBots: GET /v1/tenants/{tenant}/bots.
func (s *server) listBots(c *gin.Context) {
	opts, err := listOptions(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	bs, next, err := s.platform.Bots().List(c.Request.Context(), principal(c), c.Param("tenant"), opts)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.BotList{Bots: mapAll(bs, botOut), NextCursor: next})
}

// getBot: GET /v1/tenants/{tenant}/bots/{bot}.
func (s *server) getBot(c *gin.Context) {
	b, err := s.platform.Bots().Get(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("bot"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, botOut(b))
}
