package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
)

// statusOf is the one table from error code to HTTP status.
var statusOf = map[string]int{
	apiclient.CodeBadRequest:       http.StatusBadRequest,
	apiclient.CodeUnauthorized:     http.StatusUnauthorized,
	apiclient.CodeForbidden:        http.StatusForbidden,
	apiclient.CodeNotFound:         http.StatusNotFound,
	apiclient.CodeMethodNotAllowed: http.StatusMethodNotAllowed,
	apiclient.CodeConflict:         http.StatusConflict,
	apiclient.CodeDialogClosed:     http.StatusConflict,
	apiclient.CodeTooLarge:         http.StatusRequestEntityTooLarge,
	apiclient.CodeInvalid:          http.StatusUnprocessableEntity,
	apiclient.CodeRateLimited:      http.StatusTooManyRequests,
	apiclient.CodeLinkExpired:      http.StatusGone,
	apiclient.CodeInternal:         http.StatusInternalServerError,
	apiclient.CodeUnavailable:      http.StatusServiceUnavailable,
}

// errInternal is what clients see for anything we did not expect: never the
// internal text, which may name tables, hosts or worse.
var errInternal = &apiclient.Error{Code: apiclient.CodeInternal, Message: "internal error; the server log has the details"}

// fail answers with err as the API's error JSON and stops the chain.
// Errors that are not API or platform errors are logged with their detail
// and reach the client as a bare "internal".
func (s *server) fail(c *gin.Context, err error) {
	apiErr := s.toAPIError(err)
	if apiErr == errInternal {
		s.log.Error("request failed", "request_id", c.GetString(ctxRequestID), "route", routeLabel(c), "err", err)
	}
	writeError(c, apiErr)
}

// writeError writes an API error with the status of its code.
func writeError(c *gin.Context, e *apiclient.Error) {
	status, ok := statusOf[e.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	body := *e // a copy: the package-level errors are shared by all requests
	if body.Details == nil {
		body.Details = []apiclient.Detail{} // always a list, so clients can range over it
	}
	c.AbortWithStatusJSON(status, apiclient.ErrorBody{Error: body})
}

// toAPIError classifies err: API errors as they are, platform errors by the
// platform's code table, anything else as internal.
func (s *server) toAPIError(err error) *apiclient.Error {
	var apiErr *apiclient.Error
	if errors.As(err, &apiErr) {
		return apiErr
	}
	if e, ok := fromPlatform(err); ok {
		return e
	}
	return errInternal
}

// turnStatusOf maps the code of the error event a run ended with to the
// status of a JSON turn: the body still carries what was stored, but a
// client that only reads the status must not take a failed run for an
// answer. Codes not listed are 500 ("llm_" ones 502).
var turnStatusOf = map[string]int{
	"llm_auth":                   http.StatusBadGateway,
	"llm_bad_request":            http.StatusBadGateway,
	"llm_quota":                  http.StatusBadGateway,
	"llm_context_length":         http.StatusBadGateway,
	"llm_server":                 http.StatusBadGateway,
	"llm_network":                http.StatusBadGateway,
	"llm_rate_limit":             http.StatusServiceUnavailable,
	"llm_timeout":                http.StatusGatewayTimeout,
	"llm_canceled":               http.StatusServiceUnavailable,
	"canceled":                   http.StatusServiceUnavailable,
	"provider_unavailable":       http.StatusServiceUnavailable,
	dialog.EventServerRestarting: http.StatusServiceUnavailable,
}

// turnStatus is the status of a JSON turn whose run ended with the error
// event code.
func turnStatus(code string) int {
	if s, ok := turnStatusOf[code]; ok {
		return s
	}
	if strings.HasPrefix(code, "llm_") {
		return http.StatusBadGateway
	}
	return http.StatusInternalServerError
}
