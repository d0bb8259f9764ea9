package agent

import "errors"

// StopReason says why a run ended.
type StopReason string

// Stop reasons; docs/events.md says what each means to a client.
const (
	StopCompleted     StopReason = "completed"       // the model answered (or called done)
	StopMaxTurns      StopReason = "max_turns"       // Limits.MaxTurns model calls in one run
	StopTokenBudget   StopReason = "token_budget"    // Limits.TokenBudget tokens in one run
	StopTimeout       StopReason = "timeout"         // Limits.Timeout wall-clock time
	StopLoopDetected  StopReason = "loop_detected"   // the same tool calls again and again
	StopTooManyErrors StopReason = "too_many_errors" // Limits.MaxConsecutiveErrors failed turns
	StopPaused        StopReason = "paused"          // waiting for client results or a confirmation
	StopHandoff       StopReason = "handoff"         // a tool handed the dialog to a human
	StopQuota         StopReason = "quota"           // Hooks.OnTurnEnd said no more
	StopError         StopReason = "error"           // provider, hook or internal failure
	StopCanceled      StopReason = "canceled"        // the caller stopped the reply (ErrCanceled)
	StopGuardrail     StopReason = "guardrail"       // a guardrail rule fired (Guard)
)

// ErrCanceled is the cause to cancel a run's context with when a person
// stops the reply: the run then ends with StopCanceled, not an error.
var ErrCanceled = errors.New("agent: the reply was stopped")

// summarised reports whether a run stopped by reason gets a termination
// summary when Config.TerminationSummary is on: the limits that cut a task
// short. Not timeout: its deadline has passed, and another model call would
// break it.
func (r StopReason) summarised() bool {
	switch r {
	case StopMaxTurns, StopTokenBudget, StopLoopDetected, StopTooManyErrors:
		return true
	}
	return false
}
