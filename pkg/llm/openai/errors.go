package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/parleyhq/parley/pkg/llm"
)

// toError turns any failure of a call into an *llm.Error whose text never
// holds the API key (go-openai's errors may echo what the server said
// about it).
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
		e.Message = fmt.Sprintf("%s: %s", http.StatusText(reqErr.HTTPStatusCode), excerpt(p.errs.Redact(string(reqErr.Body))))
		classify(e, reqErr.HTTPStatusCode, "", "", string(reqErr.Body))
	case isTransportError(err):
		e.Kind, e.Retryable = llm.ErrNetwork, true
		e.Message = err.Error()
	default:
		// go-openai refused the request before sending it.
		e.Kind = llm.ErrBadRequest
		e.Message = err.Error()
	}
	return p.errs.Seal(e, err, attempts)
}

// isTransportError reports a failure to reach the server or read its answer.
func isTransportError(err error) bool {
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF)
}

// classify sets Kind and Retryable from the status, then from what
// OpenAI's error body says beyond it: a spent quota, a prompt over the
// model's window.
func classify(e *llm.Error, status int, code, typ, message string) {
	if status == 0 && typ == "server_error" {
		status = http.StatusInternalServerError // an error event inside a stream that had begun well
	}
	e.Kind, e.Retryable = llm.StatusKind(status)
	switch {
	case e.Kind == llm.ErrRateLimit && (code == "insufficient_quota" || typ == "insufficient_quota"):
		e.Kind, e.Retryable = llm.ErrQuota, false
	case e.Kind == llm.ErrBadRequest && (code == "context_length_exceeded" || strings.Contains(message, "maximum context length")):
		e.Kind = llm.ErrContextLength
	}
}

func excerpt(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
