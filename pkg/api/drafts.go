package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// getDraft: GET /v1/tenants/{tenant}/bots/{bot}/draft -> the caller's
// autosaved draft of the bot's config; 204 No Content when there is none,
// which is the usual case and no error.
func (s *server) getDraft(c *gin.Context) {
	d, found, err := s.platform.Drafts().Get(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("bot"))
	if err != nil {
		s.fail(c, err)
		return
	}
	if !found {
		c.Status(http.StatusNoContent)
		return
	}
	c.JSON(http.StatusOK, d)
}

// putDraft: PUT /v1/tenants/{tenant}/bots/{bot}/draft {config, tests?}
// replaces the caller's draft; the console sends it as they type.
func (s *server) putDraft(c *gin.Context) {
	var req apiclient.Draft
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	d, err := s.platform.Drafts().Put(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("bot"), req)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, d)
}

// deleteDraft: DELETE /v1/tenants/{tenant}/bots/{bot}/draft discards the
// caller's draft (saving a version does too).
func (s *server) deleteDraft(c *gin.Context) {
	if err := s.platform.Drafts().Delete(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("bot")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
