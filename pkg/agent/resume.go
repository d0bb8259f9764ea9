package agent

import (
	"context"
	"fmt"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/tool"
)

// ClientResult is the caller's result of a client tool call.
type ClientResult struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// SubmitToolResults resumes a run paused on client tools with their results.
// The run goes on once no call is pending; results for some of the calls only
// record them and leave the run paused. A result for a call the run does not
// wait for is rejected before anything changes.
func (a *Agent) SubmitToolResults(ctx context.Context, st *State, results []ClientResult) (Outcome, error) {
	for _, res := range results {
		if p, i := st.pending(res.ID); i < 0 || p.Kind != PendingClient {
			return Outcome{}, fmt.Errorf("%w: %q is not a client call the run waits for", ErrNotPending, res.ID)
		}
	}
	r := a.start(ctx, st)
	defer r.cancel()
	for _, res := range results {
		p := r.take(res.ID)
		if err := r.record(r.st.Turns, p, tool.Result{Content: res.Content, IsError: res.IsError}, false); err != nil {
			return r.fail(err)
		}
	}
	return r.resume("")
}

// Confirm resumes a run paused on a confirmation: an approved call runs now,
// a declined one tells the model the user said no.
func (a *Agent) Confirm(ctx context.Context, st *State, id string, approved bool) (Outcome, error) {
	if p, i := st.pending(id); i < 0 || p.Kind != PendingConfirmation {
		return Outcome{}, fmt.Errorf("%w: %q is not a call awaiting confirmation", ErrNotPending, id)
	}
	r := a.start(ctx, st)
	defer r.cancel()
	use := r.take(id)
	res := tool.Result{Content: declined, IsError: true}
	if approved {
		res = r.call(use)
	}
	if err := r.record(r.st.Turns, use, res, false); err != nil {
		return r.fail(err)
	}
	var stop StopReason
	if res.Stop != "" {
		stop = stopRequested([]planned{{result: res, recorded: true}})
	}
	return r.resume(stop)
}

// take removes a pending call and returns it as the model made it.
func (r *run) take(id string) llm.ToolUse {
	p, i := r.st.pending(id)
	r.st.Pending = append(r.st.Pending[:i:i], r.st.Pending[i+1:]...)
	return llm.ToolUse{ID: p.ID, Name: p.Name, Arguments: p.Arguments}
}

// resume continues after a pending call was answered: stop when a tool
// asked to, stay paused while calls are pending, else go on with the loop.
func (r *run) resume(stop StopReason) (Outcome, error) {
	if stop != "" {
		for len(r.st.Pending) > 0 {
			if err := r.recordSkipped(r.st.Turns, r.take(r.st.Pending[0].ID), skippedStopped); err != nil {
				return r.fail(err)
			}
		}
		return r.finish(stop)
	}
	if r.st.Paused() {
		return r.finish(StopPaused)
	}
	if err := r.addUserTexts(r.a.drainSteering()); err != nil {
		return r.fail(err)
	}
	if reason := r.limitReached(); reason != "" {
		return r.finish(reason)
	}
	return r.loop()
}
