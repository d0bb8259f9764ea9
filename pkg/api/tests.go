package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// runTests: POST /v1/tenants/{tenant}/bots/{bot}/tests {version}. Runs the
// conversation tests stored with the version, with the scripted model and
// the tests' fixtures; failing tests are a 200 with passed false.
func (s *server) runTests(c *gin.Context) {
	var req apiclient.RunTestsRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if req.Version < 1 {
		s.fail(c, invalid("/version", "must be a version number (1 or more)"))
		return
	}
	run, err := s.platform.Tests().Run(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("bot"), req.Version)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := apiclient.TestRun{Version: run.Version, Passed: run.Passed, Results: []apiclient.TestResult{}}
	for _, r := range run.Results {
		out.Results = append(out.Results, apiclient.TestResult{Name: r.Name, Passed: r.Passed, Failures: r.Failures, DurationMS: r.DurationMS})
	}
	c.JSON(http.StatusOK, out)
}

// deleteBot: DELETE /v1/tenants/{tenant}/bots/{bot}, with its versions and
// dialogs (parley apply --prune).
func (s *server) deleteBot(c *gin.Context) {
	if err := s.platform.Bots().Delete(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("bot")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// updateBot: PATCH /v1/tenants/{tenant}/bots/{bot} {require_passing_tests?}.
func (s *server) updateBot(c *gin.Context) {
	var req apiclient.UpdateBotRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if req.RequirePassingTests == nil {
		s.fail(c, invalid("", "nothing to change: send require_passing_tests"))
		return
	}
	b, err := s.platform.Tests().SetRequirePassing(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("bot"), *req.RequirePassingTests)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, botOut(b))
}
