package openai

import (
	"context"
	"errors"
	"fmt"
	"github.com/parleyhq/parley/pkg/redact"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/parleyhq/parley/pkg/llm"
)

// safeError carries a failure's text with the API key removed; it replaces
// go-openai's errors, whose text may echo what the server said about the key.
type safeError struct{ msg string }

func (e *safeError) Error() string { return e.msg }

// toError turns any failure of a call into an *llm.Error whose text never
// holds the API key.
func (p *Provider) toError(ctx context.Context, c *call, err error) error {
	var already *llm.Error
	if errors.As(err, &already) {
		return err
	}
	e := &llm.Error{Provider: p.name}
	if c != nil {
		e.RetryAfter = c.retryAfter
	}
	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	switch {
	case ctx.Err() != nil:
		return llm.ContextError(ctx, p.name)
	case errors.As(err, &apiErr):
		e.StatusCode = apiErr.HTTPStatusCode
		classify(e, apiErr.HTTPStatusCode, fmt.Sprint(apiErr.Code), apiErr.Type, apiErr.Message)
		e.Message = apiErr.Message
	case errors.As(err, &reqErr):
		e.StatusCode = reqErr.HTTPStatusCode
		e.Message = fmt.Sprintf("%s: %s", http.StatusText(reqErr.HTTPStatusCode), excerpt(p.redact(string(reqErr.Body))))
		classify(e, reqErr.HTTPStatusCode, "", "", string(reqErr.Body))
	case isTransportError(err):
		e.Kind, e.Retryable = llm.ErrNetwork, true
		e.Message = err.Error()
	default:
		// go-openai refused the request before sending it.
		e.Kind, e.RetryAfter = llm.ErrBadRequest, 0
		e.Message = err.Error()
	}
	if e.StatusCode != 0 && c != nil && c.attempts > 1 {
		e.Message = fmt.Sprintf("%s (after %d attempts)", e.Message, c.attempts)
	}
	e.Message = p.redact(e.Message)
	e.Err = &safeError{msg: p.redact(err.Error())}
	return e
}

// isTransportError reports a failure to reach the server or read its answer.
func isTransportError(err error) bool {
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF)
}

// classify sets Kind and Retryable from the status and the error body.
func classify(e *llm.Error, status int, code, typ, message string) {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Kind = llm.ErrAuth
	case status == http.StatusTooManyRequests && (code == "insufficient_quota" || typ == "insufficient_quota"):
		e.Kind = llm.ErrQuota
	case status == http.StatusTooManyRequests:
		e.Kind, e.Retryable = llm.ErrRateLimit, true
	case status == http.StatusRequestTimeout:
		e.Kind, e.Retryable = llm.ErrTimeout, true
	case status >= 500 || (status == 0 && typ == "server_error"):
		// Status 0 is an error event inside a stream that had begun well.
		e.Kind, e.Retryable = llm.ErrServer, true
	case code == "context_length_exceeded" || strings.Contains(message, "maximum context length"):
		e.Kind = llm.ErrContextLength
	default:
		e.Kind = llm.ErrBadRequest
	}
	if !e.Retryable {
		e.RetryAfter = 0
	}
}

// badRequest is a request the provider refuses before sending it.
func (p *Provider) badRequest(format string, args ...any) error {
	return &llm.Error{Kind: llm.ErrBadRequest, Provider: p.name, Message: p.redact(fmt.Sprintf(format, args...))}
}

// truncated is a stream that ended before the model said it had finished.
func (p *Provider) truncated(err error) error {
	if err == nil {
		return llm.StreamCut(p.name, "")
	}
	return llm.StreamCut(p.name, p.redact(err.Error()))
}

// keyRedactor scrubs key; one shorter than 4 characters is no real key and
// would mangle ordinary text.
func keyRedactor(key string) *redact.Redactor {
	if len(key) < 4 {
		return nil
	}
	return redact.New(key)
}

// redact removes the API key from text meant for errors and logs, however
// the server escaped or encoded it.
func (p *Provider) redact(s string) string { return p.secrets.Redact(s) }

func excerpt(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
