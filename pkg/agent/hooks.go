package agent

import (
	"context"

	"github.com/parleyhq/parley/pkg/llm"
)

// Hooks are the application's callbacks into a run. Each may be nil. They run
// on the loop's goroutine with the caller's context (not the run's timeout),
// so a persist that starts just before the deadline still finishes.
//
// How a failing hook affects the run, decided per hook:
//   - OnMessage failing stops the run with "error". The seeds log and go on,
//     but here the database is the dialog's source of truth: a message that
//     was not stored would make the next request's history differ from what
//     the model and the user saw.
//   - OnTurnEnd failing stops the run with "error" (as in the seeds): usage
//     that cannot be metered must not keep spending.
//   - OnError's own failure is ignored: it must never mask the error it
//     reports, so it returns nothing.
type Hooks struct {
	// OnMessage is called for every message the run appends to the State,
	// right after it is appended: persist it here.
	OnMessage func(ctx context.Context, m Message) error
	// OnTurnEnd is called after every model call with its usage, before any
	// tool runs. Returning false stops the run with "quota".
	OnTurnEnd func(ctx context.Context, t TurnInfo) (bool, error)
	// OnError is called when a run stops with "error", and when a
	// non-fatal step (a compaction) fails.
	OnError func(ctx context.Context, err error)
	// BeforeModelCall is called before each turn's model call with the
	// messages the model is about to see and its context window in tokens
	// (0 when unknown). What it returns is added to the system prompt of
	// that call only: knowledge found for the user's latest message. A
	// failure stops the run with "error".
	BeforeModelCall func(ctx context.Context, msgs []llm.Message, window int) (string, error)
}

// Purposes of a model call, for metering.
const (
	PurposeTurn       = "turn"       // a regular turn
	PurposeCompaction = "compaction" // summarising old messages to fit the window
	PurposeSummary    = "summary"    // the termination summary
)

// TurnInfo describes one model call for metering and quotas.
type TurnInfo struct {
	Turn     int
	Purpose  string
	Model    string
	Provider string
	// Usage is this call's usage; RunUsage the run's so far, this call included.
	Usage    llm.Usage
	RunUsage llm.Usage
	// ToolCalls is how many tools the model asked for.
	ToolCalls int
}
