package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/parleyhq/parley/configs"
)

// agentConfigSchema: GET /v1/schemas/agent-config serves the draft-07 JSON
// Schema of an agent config, the one validation checks against, so editors
// (the admin UI's completion, an IDE's "$schema") follow this server's
// version of it. It is public: the schema is in the repository anyway.
func (s *server) agentConfigSchema(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=300")
	c.Data(http.StatusOK, "application/schema+json", configs.AgentConfigSchema)
}
