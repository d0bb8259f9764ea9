package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// InvitePath is where the admin UI accepts an invite token: the token
// follows it.
const InvitePath = apiclient.InvitePath

// listMembers: GET /v1/tenants/{tenant}/members.
func (s *server) listMembers(c *gin.Context) {
	ms, err := s.platform.Members().List(c.Request.Context(), principal(c), c.Param("tenant"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.MemberList{Members: ms})
}

// inviteMember: POST /v1/tenants/{tenant}/members {email, role}. The invite
// token of a user without a password is in this answer only: no mail is
// sent, the admin hands the link on.
func (s *server) inviteMember(c *gin.Context) {
	var req apiclient.InviteMemberRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	inv, err := s.platform.Members().Invite(c.Request.Context(), principal(c), c.Param("tenant"), req.Email, req.Role)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := apiclient.Invitation{Member: inv.Member}
	if inv.Token != "" {
		out.InviteToken, out.InvitePath, out.ExpiresAt = inv.Token, InvitePath+inv.Token, &inv.ExpiresAt
	}
	c.JSON(http.StatusCreated, out)
}

// updateMember: PATCH /v1/tenants/{tenant}/members/{user} {role}.
func (s *server) updateMember(c *gin.Context) {
	var req apiclient.UpdateMemberRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	m, err := s.platform.Members().SetRole(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("user"), req.Role)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, m)
}

// removeMember: DELETE /v1/tenants/{tenant}/members/{user}.
func (s *server) removeMember(c *gin.Context) {
	if err := s.platform.Members().Remove(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("user")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
