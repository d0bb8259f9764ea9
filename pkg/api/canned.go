package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// listCannedReplies: GET /v1/tenants/{tenant}/canned-replies ->
// {canned_replies}, by shortcut.
func (s *server) listCannedReplies(c *gin.Context) {
	rs, err := s.platform.CannedReplies().List(c.Request.Context(), principal(c), c.Param("tenant"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.CannedReplyList{CannedReplies: rs})
}

// createCannedReply: POST /canned-replies {shortcut, text} -> 201 the
// reply; 409 when the shortcut is taken.
func (s *server) createCannedReply(c *gin.Context) {
	var req apiclient.CannedReplyRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	r, err := s.platform.CannedReplies().Create(c.Request.Context(), principal(c), c.Param("tenant"), deref(req.Shortcut), deref(req.Text))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, r)
}

// updateCannedReply: PATCH /canned-replies/{id} {shortcut?, text?} -> the
// reply.
func (s *server) updateCannedReply(c *gin.Context) {
	var req apiclient.CannedReplyRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	r, err := s.platform.CannedReplies().Update(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("id"), req.Shortcut, req.Text)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, r)
}

// deleteCannedReply: DELETE /canned-replies/{id} -> 204.
func (s *server) deleteCannedReply(c *gin.Context) {
	if err := s.platform.CannedReplies().Delete(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("id")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
