package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// putProvider: PUT /v1/tenants/{tenant}/providers/{name}.
func (s *server) putProvider(c *gin.Context) {
	var req apiclient.PutProviderRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	info, err := s.platform.Providers().Put(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("name"),
		platform.ProviderSpec{Kind: req.Kind, BaseURL: req.BaseURL, APIKeySecret: req.APIKeySecret, Headers: req.Headers, Models: req.Models})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, info)
}

// listProviders: GET /v1/tenants/{tenant}/providers.
func (s *server) listProviders(c *gin.Context) {
	infos, err := s.platform.Providers().List(c.Request.Context(), principal(c), c.Param("tenant"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.ProviderList{Providers: infos})
}

// deleteProvider: DELETE /v1/tenants/{tenant}/providers/{name}.
func (s *server) deleteProvider(c *gin.Context) {
	if err := s.platform.Providers().Delete(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("name")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
