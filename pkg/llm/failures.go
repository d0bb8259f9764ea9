package llm

import (
	"fmt"

	"github.com/parleyhq/parley/pkg/redact"
)

// Failures makes a provider's errors: each names the provider, and none
// holds its API key, however a server escaped or encoded it.
type Failures struct {
	provider string
	key      *redact.Redactor
}

// NewFailures makes the errors of the provider named provider, which sends
// apiKey. A key shorter than 4 characters is no real key and is left in
// place: scrubbing it would mangle ordinary text.
func NewFailures(provider, apiKey string) Failures {
	f := Failures{provider: provider}
	if len(apiKey) >= 4 {
		f.key = redact.New(apiKey)
	}
	return f
}

// Redact removes the API key from s.
func (f Failures) Redact(s string) string { return f.key.Redact(s) }

// BadRequest is a request the provider refuses before sending it.
func (f Failures) BadRequest(format string, args ...any) error {
	return &Error{Kind: ErrBadRequest, Provider: f.provider, Message: f.Redact(fmt.Sprintf(format, args...))}
}

// StreamCut is a stream that ended before the model said it had finished;
// err, when not nil, says why.
func (f Failures) StreamCut(err error) error {
	if err == nil {
		return StreamCut(f.provider, "")
	}
	return StreamCut(f.provider, f.Redact(err.Error()))
}

// Seal finishes e, classified from cause after attempts HTTP attempts: it
// keeps a requested wait only if e may pass when retried, says how many
// attempts there were when the server answered more than once, takes the
// key out of the message, and keeps cause's text, key removed, in place of
// cause (an SDK's error text may hold the whole response).
func (f Failures) Seal(e *Error, cause error, attempts int) error {
	if !e.Retryable {
		e.RetryAfter = 0
	}
	if e.StatusCode != 0 && attempts > 1 {
		e.Message = fmt.Sprintf("%s (after %d attempts)", e.Message, attempts)
	}
	e.Message = f.Redact(e.Message)
	e.Err = &redacted{msg: f.Redact(cause.Error())}
	return e
}

// redacted is a failure's text with the API key removed.
type redacted struct{ msg string }

func (e *redacted) Error() string { return e.msg }
