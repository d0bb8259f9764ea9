package agent

import (
	"context"
	"errors"

	"github.com/parleyhq/parley/pkg/llm"
)

// ErrNotPending is returned when a result or confirmation names a call the
// run does not wait for.
var ErrNotPending = errors.New("agent: no such pending tool call")

// HookError is an application hook's failure that stopped the run.
type HookError struct {
	Hook string
	Err  error
}

func (e *HookError) Error() string { return "agent: " + e.Hook + " hook: " + e.Err.Error() }

func (e *HookError) Unwrap() error { return e.Err }

// ResolveError is the provider resolver's failure that stopped the run.
type ResolveError struct{ Err error }

func (e *ResolveError) Error() string { return "agent: resolve provider: " + e.Err.Error() }

func (e *ResolveError) Unwrap() error { return e.Err }

// providerMessages are what end users read when the model call fails. The
// provider's own text stays in the logs (OnError): it can name internal
// addresses, the upstream's wording, or echo part of an API key.
var providerMessages = map[llm.ErrorKind]string{
	llm.ErrAuth:          "the language model rejected the platform's credentials",
	llm.ErrBadRequest:    "the language model rejected the request",
	llm.ErrRateLimit:     "the language model is busy; try again shortly",
	llm.ErrQuota:         "the language model's usage limit is reached",
	llm.ErrContextLength: "the conversation is too long for the language model",
	llm.ErrServer:        "the language model failed; try again shortly",
	llm.ErrTimeout:       "the language model did not answer in time",
	llm.ErrNetwork:       "the language model could not be reached",
	llm.ErrCanceled:      "the request was canceled",
}

// describe turns a run's failure into the error event: a stable code and a
// fixed message, because provider, hook and internal errors may hold
// database or network detail that must not reach clients.
func describe(err error) Error {
	var (
		pe *llm.Error
		he *HookError
		re *ResolveError
	)
	switch {
	case errors.As(err, &pe):
		msg, ok := providerMessages[pe.Kind]
		if !ok {
			msg = "the language model failed"
		}
		return Error{Code: "llm_" + string(pe.Kind), Message: msg, Retryable: pe.Retryable}
	case errors.As(err, &he) && he.Hook == "OnTurnEnd":
		return Error{Code: "metering_failed", Message: "usage could not be recorded", Retryable: true}
	case errors.As(err, &he) && he.Hook == "BeforeModelCall":
		return Error{Code: "context_failed", Message: "what the model needs to answer could not be prepared", Retryable: true}
	case errors.As(err, &he):
		return Error{Code: "persist_failed", Message: "the conversation could not be saved", Retryable: true}
	case errors.As(err, &re):
		return Error{Code: "provider_unavailable", Message: "no language model is available", Retryable: true}
	case errors.Is(err, context.Canceled):
		return Error{Code: "canceled", Message: "the request was canceled"}
	}
	return Error{Code: "internal", Message: "internal error"}
}
