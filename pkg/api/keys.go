package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// createKey: POST /v1/tenants/{tenant}/api-keys. The plaintext key is in
// this answer only.
func (s *server) createKey(c *gin.Context) {
	var req apiclient.CreateAPIKeyRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	k, err := s.platform.APIKeys().Create(c.Request.Context(), principal(c), c.Param("tenant"), platform.APIKeyInput{
		Name: req.Name, Kind: req.Kind, Scopes: req.Scopes, Bot: req.Bot, Origins: req.Origins, ExpiresAt: req.ExpiresAt,
	})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, newKeyOut(k))
}

// listKeys: GET /v1/tenants/{tenant}/api-keys.
func (s *server) listKeys(c *gin.Context) {
	opts, err := listOptions(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	ks, next, err := s.platform.APIKeys().List(c.Request.Context(), principal(c), c.Param("tenant"), opts)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.APIKeyList{APIKeys: mapAll(ks, keyOut), NextCursor: next})
}

// updateKey: PATCH /v1/tenants/{tenant}/api-keys/{id} {origins}: a pk
// key's allowed origins.
func (s *server) updateKey(c *gin.Context) {
	var req apiclient.UpdateAPIKeyRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	k, err := s.platform.APIKeys().Update(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("id"), platform.APIKeyPatch{Origins: req.Origins})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, keyOut(k))
}

// revokeKey: DELETE /v1/tenants/{tenant}/api-keys/{id}. The key stops
// working with the next request.
func (s *server) revokeKey(c *gin.Context) {
	k, err := s.platform.APIKeys().Revoke(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, keyOut(k))
}
