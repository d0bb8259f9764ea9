package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// putIdentity: PUT /v1/tenants/{tenant}/identity {secret? | jwks_url?,
// audience?} -> the settings, never the secret.
func (s *server) putIdentity(c *gin.Context) {
	var req apiclient.PutIdentityRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	out, err := s.platform.Identities().Put(c.Request.Context(), principal(c), c.Param("tenant"),
		platform.IdentityInput{Secret: req.Secret, JWKSURL: req.JWKSURL, Audience: req.Audience})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// getIdentity: GET /v1/tenants/{tenant}/identity.
func (s *server) getIdentity(c *gin.Context) {
	out, err := s.platform.Identities().Get(c.Request.Context(), principal(c), c.Param("tenant"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// deleteIdentity: DELETE /v1/tenants/{tenant}/identity.
func (s *server) deleteIdentity(c *gin.Context) {
	if err := s.platform.Identities().Delete(c.Request.Context(), principal(c), c.Param("tenant")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
