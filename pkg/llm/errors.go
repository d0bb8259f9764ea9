package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// ErrorKind classifies a provider failure.
type ErrorKind string

// Provider failure kinds.
const (
	ErrAuth          ErrorKind = "auth"           // 401, 403: fix the key
	ErrBadRequest    ErrorKind = "bad_request"    // 400, 404, 422: fix the request
	ErrRateLimit     ErrorKind = "rate_limit"     // 429 that passes with time
	ErrQuota         ErrorKind = "quota"          // 429 for an exhausted spend limit
	ErrContextLength ErrorKind = "context_length" // the prompt is over the model's window
	ErrServer        ErrorKind = "server"         // 5xx
	ErrTimeout       ErrorKind = "timeout"
	ErrNetwork       ErrorKind = "network"
	ErrCanceled      ErrorKind = "canceled"
)

// Error is a typed provider failure. Message is safe to show: it never holds
// the API key.
type Error struct {
	Kind       ErrorKind
	Provider   string
	StatusCode int
	Message    string
	// Retryable says whether the same request may succeed later.
	Retryable bool
	// RetryAfter is the provider's requested wait, zero when it named none.
	RetryAfter time.Duration
	Err        error
}

func (e *Error) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("%s: %s (status %d): %s", e.Provider, e.Kind, e.StatusCode, e.Message)
	}
	return fmt.Sprintf("%s: %s: %s", e.Provider, e.Kind, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// IsRetryable reports whether err is a provider error that may pass when retried,
// and how long the provider asked to wait.
func IsRetryable(err error) (bool, time.Duration) {
	var e *Error
	if errors.As(err, &e) {
		return e.Retryable, e.RetryAfter
	}
	return false, 0
}

// ContextError is the failure of a call whose ctx ended: canceled, or a
// retryable timeout when its deadline passed; nil while ctx is live.
func ContextError(ctx context.Context, provider string) *Error {
	switch {
	case ctx.Err() == nil:
		return nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Error{Kind: ErrTimeout, Provider: provider, Retryable: true, Message: "the request timed out", Err: ctx.Err()}
	default:
		return &Error{Kind: ErrCanceled, Provider: provider, Message: "the request was canceled", Err: ctx.Err()}
	}
}

// StreamCut is a stream that ended before the model said it had finished:
// a retryable network failure, never retried by a provider itself since
// the caller has seen part of it. detail, free of keys, may say why.
func StreamCut(provider, detail string) *Error {
	msg := "the stream ended before the model finished"
	if detail != "" {
		msg += ": " + detail
	}
	return &Error{Kind: ErrNetwork, Provider: provider, Message: msg, Retryable: true, Err: errors.New(msg)}
}

// StatusKind is the kind of a failure a provider answered with an HTTP
// status, and whether the same request may succeed later: 401 and 403 are
// auth; 429 a rate limit, 408 and 504 a timeout, any other 5xx a server
// error, those three retryable; anything else a bad request. Providers
// refine it from their error bodies (a spent quota, a prompt over the
// model's window).
func StatusKind(status int) (kind ErrorKind, retryable bool) {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return ErrAuth, false
	case status == http.StatusTooManyRequests:
		return ErrRateLimit, true
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		return ErrTimeout, true
	case status >= 500:
		return ErrServer, true
	default:
		return ErrBadRequest, false
	}
}
