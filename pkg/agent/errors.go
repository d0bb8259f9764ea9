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

// describe turns a run's failure into the error event. Only provider
// messages (written to be shown) pass through; everything else gets a fixed
// text, because hook and internal errors may hold database or network detail.
func describe(err error) Error {
	var (
		pe *llm.Error
		he *HookError
		re *ResolveError
	)
	switch {
	case errors.As(err, &pe):
		return Error{Code: "llm_" + string(pe.Kind), Message: pe.Message, Retryable: pe.Retryable}
	case errors.As(err, &he) && he.Hook == "OnTurnEnd":
		return Error{Code: "metering_failed", Message: "usage could not be recorded", Retryable: true}
	case errors.As(err, &he):
		return Error{Code: "persist_failed", Message: "the conversation could not be saved", Retryable: true}
	case errors.As(err, &re):
		return Error{Code: "provider_unavailable", Message: "no language model is available", Retryable: true}
	case errors.Is(err, context.Canceled):
		return Error{Code: "canceled", Message: "the request was canceled"}
	}
	return Error{Code: "internal", Message: "internal error"}
}
