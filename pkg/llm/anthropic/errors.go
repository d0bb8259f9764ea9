package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/parleyhq/parley/pkg/httpretry"
	"github.com/parleyhq/parley/pkg/llm"
)

// apiErrorBody is Anthropic's error shape, also sent as a stream's error
// event.
type apiErrorBody struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// streamErrorPrefix starts the SDK's error for an error event inside a
// stream, followed by the event's JSON.
const streamErrorPrefix = "received error while streaming: "

// retryPolicy is an SDK middleware that sees every attempt's response: it
// remembers the requested wait, and vetoes the SDK's retry (x-should-retry)
// of a spent budget, which waiting does not fix, and of a wait longer than
// the caller accepts.
type retryPolicy struct{ maxRetryAfter time.Duration }

func (p retryPolicy) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	c := callFrom(req.Context())
	if c != nil {
		c.attempts++
	}
	resp, err := next(req)
	if err != nil || resp.StatusCode < 400 {
		return resp, err
	}
	wait, hasWait := httpretry.RetryAfter(resp.Header)
	if c != nil {
		c.retryAfter = wait
	}
	switch {
	case hasWait && wait > p.maxRetryAfter:
		resp.Header.Set("x-should-retry", "false")
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusPaymentRequired:
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(raw))
		var body apiErrorBody
		_ = json.Unmarshal(raw, &body)
		if isSpent(resp.StatusCode, body.Error.Type, body.Error.Message) {
			resp.Header.Set("x-should-retry", "false")
		}
	}
	return resp, nil
}

// isSpent reports an exhausted credit balance or spend limit.
func isSpent(status int, typ, message string) bool {
	if typ == "billing_error" || status == http.StatusPaymentRequired {
		return true
	}
	m := strings.ToLower(message)
	return (status == http.StatusTooManyRequests || status == http.StatusBadRequest) &&
		(strings.Contains(m, "credit balance") || strings.Contains(m, "spend limit") || strings.Contains(m, "usage limits"))
}

// toError turns any failure of a call into an *llm.Error whose text never
// holds the API key (the SDK's errors hold the whole response body).
func (p *Provider) toError(ctx context.Context, c *call, err error) error {
	var already *llm.Error
	if errors.As(err, &already) {
		return err
	}
	e := &llm.Error{Provider: p.name}
	attempts := 0
	if c != nil {
		e.RetryAfter, attempts = c.retryAfter, c.attempts
	}
	var apiErr *sdk.Error
	switch {
	case ctx.Err() != nil:
		return llm.ContextError(ctx, p.name)
	case errors.As(err, &apiErr):
		var body apiErrorBody
		_ = json.Unmarshal([]byte(apiErr.RawJSON()), &body)
		e.StatusCode = apiErr.StatusCode
		e.Message = body.Error.Message
		if e.Message == "" {
			e.Message = http.StatusText(apiErr.StatusCode)
		}
		classify(e, apiErr.StatusCode, body.Error.Type, body.Error.Message)
	case strings.HasPrefix(err.Error(), streamErrorPrefix):
		return p.streamError(ctx, c, err)
	case isTransportError(err):
		e.Kind, e.Retryable = llm.ErrNetwork, true
		e.Message = err.Error()
	default:
		e.Kind = llm.ErrBadRequest
		e.Message = err.Error()
	}
	return p.errs.Seal(e, err, attempts)
}

// streamError classifies a failure after the reply began: an error event
// (overloaded_error, api_error, ...) by its type, anything else as a broken
// stream.
func (p *Provider) streamError(ctx context.Context, c *call, err error) error {
	raw, ok := strings.CutPrefix(err.Error(), streamErrorPrefix)
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		raw, ok = apiErr.RawJSON(), true
	}
	var body apiErrorBody
	if !ok || json.Unmarshal([]byte(raw), &body) != nil || body.Error.Type == "" {
		if ctx.Err() != nil {
			return p.toError(ctx, c, err)
		}
		return p.errs.StreamCut(err)
	}
	e := &llm.Error{Provider: p.name, Message: body.Error.Message}
	classify(e, statusOf(body.Error.Type), body.Error.Type, body.Error.Message)
	return p.errs.Seal(e, err, 0)
}

// statusOf is the HTTP status Anthropic documents for an error type, for
// errors that arrive inside a stream without one.
func statusOf(typ string) int {
	switch typ {
	case "invalid_request_error":
		return http.StatusBadRequest
	case "authentication_error":
		return http.StatusUnauthorized
	case "billing_error":
		return http.StatusPaymentRequired
	case "permission_error":
		return http.StatusForbidden
	case "not_found_error":
		return http.StatusNotFound
	case "request_too_large":
		return http.StatusRequestEntityTooLarge
	case "rate_limit_error":
		return http.StatusTooManyRequests
	case "timeout_error":
		return http.StatusGatewayTimeout
	case "overloaded_error":
		return 529
	default:
		return http.StatusInternalServerError
	}
}

// classify sets Kind and Retryable from the status (529 overloaded_error
// is a retryable server error: another provider may answer), then from
// what Anthropic's error body says beyond it: a spent budget, a prompt
// over the model's window.
func classify(e *llm.Error, status int, typ, message string) {
	e.Kind, e.Retryable = llm.StatusKind(status)
	switch {
	case isSpent(status, typ, message):
		e.Kind, e.Retryable = llm.ErrQuota, false
	case e.Kind == llm.ErrBadRequest && (strings.Contains(message, "prompt is too long") || status == http.StatusRequestEntityTooLarge):
		e.Kind = llm.ErrContextLength
	}
}

// isTransportError reports a failure to reach the server or read its answer.
func isTransportError(err error) bool {
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}
