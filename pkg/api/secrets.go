package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// Secrets are write-only: no handler here ever returns a value.

// putSecret: PUT /v1/tenants/{tenant}/secrets/{name}.
func (s *server) putSecret(c *gin.Context) {
	var req apiclient.PutSecretRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	info, err := s.platform.Secrets().Put(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("name"), req.Value)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, info)
}

// listSecrets: GET /v1/tenants/{tenant}/secrets (names only).
func (s *server) listSecrets(c *gin.Context) {
	infos, err := s.platform.Secrets().ListNames(c.Request.Context(), principal(c), c.Param("tenant"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.SecretList{Secrets: infos})
}

// deleteSecret: DELETE /v1/tenants/{tenant}/secrets/{name}.
func (s *server) deleteSecret(c *gin.Context) {
	if err := s.platform.Secrets().Delete(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("name")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
