package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// Outbound webhook endpoints. A secret is in the answers of create and
// rotate-secret only; nothing else returns it.

// createWebhook: POST /v1/tenants/{tenant}/webhooks.
func (s *server) createWebhook(c *gin.Context) {
	var req apiclient.CreateWebhookRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	w, err := s.platform.Webhooks().Create(c.Request.Context(), principal(c), c.Param("tenant"), platform.WebhookInput{
		Name: req.Name, URL: req.URL, Description: req.Description, Events: req.Events, Bot: req.Bot, Enabled: req.Enabled, Secret: req.Secret})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, w)
}

// listWebhooks: GET /v1/tenants/{tenant}/webhooks.
func (s *server) listWebhooks(c *gin.Context) {
	ws, err := s.platform.Webhooks().List(c.Request.Context(), principal(c), c.Param("tenant"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.WebhookList{Webhooks: ws})
}

// getWebhook: GET /v1/tenants/{tenant}/webhooks/{id}.
func (s *server) getWebhook(c *gin.Context) {
	w, err := s.platform.Webhooks().Get(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, w)
}

// updateWebhook: PATCH /v1/tenants/{tenant}/webhooks/{id}.
func (s *server) updateWebhook(c *gin.Context) {
	var req apiclient.UpdateWebhookRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	w, err := s.platform.Webhooks().Update(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("id"),
		platform.WebhookPatch{URL: req.URL, Description: req.Description, Events: req.Events, Bot: req.Bot, Enabled: req.Enabled})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, w)
}

// deleteWebhook: DELETE /v1/tenants/{tenant}/webhooks/{id}.
func (s *server) deleteWebhook(c *gin.Context) {
	if err := s.platform.Webhooks().Delete(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("id")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// rotateWebhookSecret: POST /v1/tenants/{tenant}/webhooks/{id}/rotate-secret,
// with an optional body {secret}.
func (s *server) rotateWebhookSecret(c *gin.Context) {
	var req apiclient.RotateWebhookSecretRequest
	if c.Request.ContentLength != 0 {
		if err := decodeJSON(c, &req); err != nil {
			s.fail(c, err)
			return
		}
	}
	w, err := s.platform.Webhooks().RotateSecret(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("id"), req.Secret)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, w)
}

// testWebhook: POST /v1/tenants/{tenant}/webhooks/{id}/test.
func (s *server) testWebhook(c *gin.Context) {
	d, err := s.platform.Webhooks().Test(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, d)
}

// listWebhookDeliveries: GET /v1/tenants/{tenant}/webhooks/{id}/deliveries.
func (s *server) listWebhookDeliveries(c *gin.Context) {
	opts, err := listOptions(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	ds, next, err := s.platform.Webhooks().ListDeliveries(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("id"), opts)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.WebhookDeliveryList{Deliveries: ds, NextCursor: next})
}

// replayWebhookDelivery: POST /v1/tenants/{tenant}/webhooks/{id}/deliveries/{delivery}/replay.
func (s *server) replayWebhookDelivery(c *gin.Context) {
	d, err := s.platform.Webhooks().ReplayDelivery(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("id"), c.Param("delivery"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, d)
}
