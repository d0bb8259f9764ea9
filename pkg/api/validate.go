package api

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/botconfig"
)

// validate: POST /v1/validate {config} -> {valid, errors, prompt, tools}.
// It needs a valid credential of any kind (any tenant's key, a session, the
// platform token) but no permission: it reads and writes nothing, and the
// credential only keeps anonymous clients from spending our CPU on
// compiling. An invalid config is a 200 with valid=false, since checking
// it was the request and that succeeded.
func (s *server) validate(c *gin.Context) {
	var req apiclient.ValidateRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	bot, err := s.compileConfig(req.Config)
	var problems botconfig.Problems
	switch {
	case errors.As(err, &problems):
		out := apiclient.ValidateResponse{Valid: false, Errors: make([]apiclient.Detail, len(problems)), Tools: []botconfig.OfferedTool{}}
		for i, p := range problems {
			out.Errors[i] = apiclient.Detail{Pointer: p.Pointer, Message: p.Message}
		}
		c.JSON(http.StatusOK, out)
	case err != nil:
		s.fail(c, err)
	default:
		c.JSON(http.StatusOK, apiclient.ValidateResponse{
			Valid: true, Errors: []apiclient.Detail{}, Prompt: bot.SystemPrompt, Tools: bot.Offered(),
		})
	}
}

// compileConfig is what the platform does before saving a version, under
// the operator's rules (the stdio env keys tenants may set, ...).
func (s *server) compileConfig(data []byte) (*botconfig.Bot, error) {
	if len(data) == 0 {
		return nil, botconfig.Problems{{Pointer: "", Message: "a config is required"}}
	}
	return s.platform.CompileConfig(data)
}
