package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/botconfig"
)

// validate: POST /v1/validate {config, tenant?} -> {valid, errors,
// warnings, prompt, tools}. It needs a valid credential of any kind (any
// tenant's key, a session, the platform token) but no permission: it
// reads and writes nothing, and the credential only keeps anonymous
// clients from spending our CPU on compiling. With a tenant it also checks
// the providers and models the config names as saving would, which takes
// the right to read that tenant's versions. An invalid config is a 200
// with valid=false, since checking it was the request and that succeeded.
func (s *server) validate(c *gin.Context) {
	var req apiclient.ValidateRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	res, err := s.platform.Configs().Validate(c.Request.Context(), principal(c), req.Tenant, req.Config)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := apiclient.ValidateResponse{Valid: res.Bot != nil, Errors: orEmpty(details(res.Errors)),
		Warnings: orEmpty(details(res.Warnings)), Tools: []botconfig.OfferedTool{}}
	if res.Bot != nil {
		out.Prompt, out.Tools = res.Bot.SystemPrompt, res.Bot.Offered()
	}
	c.JSON(http.StatusOK, out)
}

// orEmpty makes a nil list an empty one, so clients can range over it.
func orEmpty(ds []apiclient.Detail) []apiclient.Detail {
	if ds == nil {
		return []apiclient.Detail{}
	}
	return ds
}
