package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// createTenant: POST /v1/tenants (platform token only).
func (s *server) createTenant(c *gin.Context) {
	var req apiclient.CreateTenantRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	t, key, err := s.platform.Tenants().Create(c.Request.Context(), principal(c), platform.CreateTenantInput{
		Slug: req.Slug, Name: req.Name, OwnerEmail: req.OwnerEmail, OwnerPassword: req.OwnerPassword,
	})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, apiclient.CreateTenantResponse{Tenant: t, APIKey: newKeyOut(key)})
}

// listTenants: GET /v1/tenants. The operator sees all; others their own.
func (s *server) listTenants(c *gin.Context) {
	opts, err := listOptions(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	ts, next, err := s.platform.Tenants().List(c.Request.Context(), principal(c), opts)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.TenantList{Tenants: ts, NextCursor: next})
}

// getTenant: GET /v1/tenants/{tenant}.
func (s *server) getTenant(c *gin.Context) {
	t, err := s.platform.Tenants().Get(c.Request.Context(), principal(c), c.Param("tenant"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, t)
}

// updateTenant: PATCH /v1/tenants/{tenant} {name?, retention_days?, idle_minutes?}.
func (s *server) updateTenant(c *gin.Context) {
	var req apiclient.UpdateTenantRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	t, err := s.platform.Tenants().Update(c.Request.Context(), principal(c), c.Param("tenant"),
		platform.UpdateTenantInput{Name: req.Name, RetentionDays: req.RetentionDays, IdleMinutes: req.IdleMinutes,
			RequireTwoFactor: req.RequireTwoFactor})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, t)
}
