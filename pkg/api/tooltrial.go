package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
)

// tryTool: POST /v1/tenants/{tenant}/tools/try {config, tool, arguments?,
// context?}. The admin UI's request tester: it sends one call of a draft's
// HTTP tool as a dialog would and answers with the request sent, the
// response received and the model's result, secrets redacted. A refused
// destination or a non-2xx answer is a 200 with result.is_error, since
// trying was the request and that succeeded.
func (d *dialogAPI) tryTool(c *gin.Context) {
	var req apiclient.ToolTrialRequest
	if err := decodeJSON(c, &req); err != nil {
		d.fail(c, err)
		return
	}
	if req.Tool == "" {
		d.fail(c, invalid("/tool", "name the HTTP tool to try"))
		return
	}
	trial, err := d.rt.TryHTTPTool(c.Request.Context(), principal(c), c.Param("tenant"), dialog.ToolTrialInput{
		Config: req.Config, Tool: req.Tool, Arguments: req.Arguments, Context: req.Context})
	if err != nil {
		d.fail(c, err)
		return
	}
	out := apiclient.ToolTrial{Result: apiclient.TrialResult{Content: trial.Result.Content, IsError: trial.Result.IsError,
		DurationMS: trial.Result.Meta.Duration.Milliseconds()}}
	if r := trial.Request; r != nil {
		out.Request = &apiclient.TrialRequest{Method: r.Method, URL: r.URL, Headers: r.Header, Body: r.Body}
	}
	if r := trial.Response; r != nil {
		out.Response = &apiclient.TrialResponse{Status: r.Status, Headers: r.Header, Body: r.Body, Truncated: r.Truncated}
	}
	c.JSON(http.StatusOK, out)
}
