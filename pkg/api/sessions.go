package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// listSessions: GET /v1/auth/sessions -> the caller's own sessions.
func (s *server) listSessions(c *gin.Context) {
	rows, err := s.platform.Sessions().List(c.Request.Context(), principal(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.SessionList{Sessions: rows})
}

// endSession: DELETE /v1/auth/sessions/{id} ends one of the caller's
// sessions.
func (s *server) endSession(c *gin.Context) {
	if err := s.platform.Sessions().End(c.Request.Context(), principal(c), c.Param("id")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// endMemberSessions: DELETE /v1/tenants/{tenant}/members/{user}/sessions
// signs a member out everywhere.
func (s *server) endMemberSessions(c *gin.Context) {
	n, err := s.platform.Sessions().EndMember(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("user"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.EndedSessions{Ended: n})
}
