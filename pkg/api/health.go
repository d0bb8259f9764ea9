package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// readyTimeout bounds the database ping, so a hung database fails the probe
// instead of hanging it.
const readyTimeout = 3 * time.Second

// health answers that the process is alive; it touches nothing else, so a
// slow database never gets a healthy process restarted.
func (s *server) health(c *gin.Context) {
	c.JSON(http.StatusOK, apiclient.Health{Status: "ok"})
}

// ready answers whether the server can do work: the database answers.
// Redis (PARLEY_REDIS_URL) is a detail, not a condition: without it each
// server still counts limits on its own, and taking every server out of
// the load balancer because a shared counter is away would stop them all.
func (s *server) ready(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), readyTimeout)
	defer cancel()
	if err := s.platform.Ping(ctx); err != nil {
		s.log.Warn("not ready", "request_id", c.GetString(ctxRequestID), "err", err)
		writeError(c, &apiclient.Error{Code: apiclient.CodeUnavailable, Message: "the database does not answer"})
		return
	}
	c.JSON(http.StatusOK, apiclient.Health{Status: "ready", Redis: s.runtime.Quotas().SharedLimits()})
}
