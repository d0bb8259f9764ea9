package agent

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/tool"
)

// callKind is how the loop handles one tool call.
type callKind int

const (
	runHere   callKind = iota // a server tool, run now (unknown and invalid calls too: Set.Call answers them)
	runDone                   // the done tool of require_done_tool
	askClient                 // the caller runs it
	askHuman                  // a human confirms it first
)

// planned is one call of a batch and, once run, its result.
type planned struct {
	use    llm.ToolUse
	kind   callKind
	result tool.Result
	// ran says result holds the answer; recorded that it is in the dialog.
	ran      bool
	recorded bool
}

// runTools runs one answer's tool calls and records their results in call
// order. It returns a stop reason when the batch ends the run.
func (r *run) runTools(turn int, calls []llm.ToolUse) (StopReason, error) {
	batch := make([]planned, len(calls))
	for i, c := range calls {
		batch[i] = r.plan(c)
		r.a.sink.Send(ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	steered, err := r.runServerCalls(turn, batch)
	if err != nil {
		return "", err
	}
	if steered {
		return "", r.steer(turn, batch)
	}
	stop, err := r.finishDone(turn, batch)
	if err != nil {
		return "", err
	}
	if stop == "" {
		stop = stopRequested(batch)
	}
	if stop != "" {
		return stop, r.skipWaiting(turn, batch, skippedStopped)
	}
	r.countErrors(batch)
	if r.pause(batch) {
		return StopPaused, nil
	}
	return "", nil
}

// plan classifies a call. Client and confirmation calls are validated now,
// so a malformed call is answered at once instead of pausing for it.
func (r *run) plan(c llm.ToolUse) planned {
	if r.a.cfg.StrictTools {
		c.Arguments = llm.DropNulls(c.Arguments)
	}
	p := planned{use: c, kind: runHere}
	set := r.a.cfg.Tools
	if r.a.cfg.RequireDoneTool && c.Name == doneToolName {
		p.kind = runDone
		return p
	}
	if b := r.a.skills; b != nil {
		if c.Name == LoadSkillTool {
			p.result, p.ran = r.load(c.Arguments), true
			return p
		}
		if res, locked := b.lockedCall(r.st.Skills, c.Name); locked {
			p.result, p.ran = res, true
			return p
		}
	}
	if set == nil {
		p.result, p.ran = tool.Errorf("unknown tool "+c.Name+"; no tools are available"), true
		return p
	}
	t, ok := set.Lookup(c.Name)
	if !ok {
		return p
	}
	if ce, ok := t.(tool.ClientExecuted); ok && ce.ClientExecuted() {
		p.kind = askClient
	} else if cr, ok := t.(tool.ConfirmationRequired); ok && cr.RequiresConfirmation() {
		p.kind = askHuman
	}
	if p.kind != runHere {
		if err := set.Validate(c.Name, c.Arguments); err != nil {
			p.kind, p.result, p.ran = runHere, tool.Errorf(err.Error()), true
		}
	}
	return p
}

// runServerCalls runs the calls the loop executes itself: concurrently when
// parallel calls are on, else one by one, checking before each whether the
// user steered. Results are recorded in call order either way. It reports
// whether steering cut the batch short.
func (r *run) runServerCalls(turn int, batch []planned) (bool, error) {
	var todo []int
	for i := range batch {
		if batch[i].kind == runHere {
			todo = append(todo, i)
		}
	}
	if r.a.cfg.ParallelToolCalls && len(todo) > 1 {
		if r.a.steeringWaiting() {
			return true, nil
		}
		r.callConcurrently(batch, todo)
		for _, i := range todo {
			if err := r.record(turn, batch[i].use, batch[i].result, false); err != nil {
				return false, err
			}
			batch[i].recorded = true
		}
		// Input that arrived while the batch ran still skips what is left:
		// client calls, confirmations and done.
		return r.a.steeringWaiting(), nil
	}
	for _, i := range todo {
		if r.a.steeringWaiting() {
			return true, nil
		}
		p := &batch[i]
		if !p.ran {
			p.result, p.ran = r.call(p.use), true
		}
		if err := r.record(turn, p.use, p.result, false); err != nil {
			return false, err
		}
		p.recorded = true
	}
	return r.a.steeringWaiting(), nil
}

func (r *run) callConcurrently(batch []planned, todo []int) {
	var wg sync.WaitGroup
	for _, i := range todo {
		p := &batch[i]
		if p.ran {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.result = r.call(p.use)
		}()
		p.ran = true
	}
	wg.Wait()
}

// call runs one tool with the per-call timeout.
func (r *run) call(use llm.ToolUse) tool.Result {
	ctx, cancel := context.WithTimeout(r.ctx, r.a.cfg.Limits.ToolTimeout)
	defer cancel()
	if r.a.callIDs {
		ctx = tool.WithCallID(ctx, use.ID)
	}
	return r.a.cfg.Tools.Call(ctx, use.Name, use.Arguments)
}

// record appends a call's result to the dialog and tells the client.
func (r *run) record(turn int, use llm.ToolUse, res tool.Result, skipped bool) error {
	content, cut := tool.Truncate(res.Content, r.a.cfg.Context.MaxToolResultChars)
	if content == "" {
		content = "(no output)" // some APIs refuse an empty tool message
	}
	m := Message{Kind: KindToolResult, Turn: turn,
		Message: llm.ToolResultMessage(llm.ToolResult{ToolUseID: use.ID, Name: use.Name, Content: content, IsError: res.IsError}),
		Tool: &ToolInfo{DurationMS: res.Meta.Duration.Milliseconds(), Status: res.Meta.Status, Kind: res.Meta.Kind,
			Truncated: cut || res.Meta.Truncated, Skipped: skipped}}
	if skipped {
		m.Origin = OriginLoop
	}
	if err := r.add(m); err != nil {
		return err
	}
	r.a.sink.Send(ToolResult{ID: use.ID, Name: use.Name, IsError: res.IsError, Content: content, DurationMS: m.Tool.DurationMS})
	return nil
}

func (r *run) recordSkipped(turn int, use llm.ToolUse, why string) error {
	return r.record(turn, use, tool.Errorf(why), true)
}

// skipAll answers every call of a batch that will not run.
func (r *run) skipAll(turn int, calls []llm.ToolUse, why string) error {
	for _, c := range calls {
		if err := r.recordSkipped(turn, c, why); err != nil {
			return err
		}
	}
	return nil
}

// skipWaiting answers the calls of a batch that have not run.
func (r *run) skipWaiting(turn int, batch []planned, why string) error {
	for _, p := range batch {
		if !p.recorded {
			if err := r.recordSkipped(turn, p.use, why); err != nil {
				return err
			}
		}
	}
	return nil
}

// steer skips what has not run, tells the client, and adds the new input.
func (r *run) steer(turn int, batch []planned) error {
	skipped := []string{}
	for i := range batch {
		if p := &batch[i]; !p.recorded {
			skipped = append(skipped, p.use.ID)
			if err := r.recordSkipped(turn, p.use, skippedSteered); err != nil {
				return err
			}
		}
	}
	r.a.sink.Send(Steering{Skipped: skipped})
	return r.addUserTexts(r.a.drainSteering())
}

// finishDone answers a done call, which ends the run with its message.
func (r *run) finishDone(turn int, batch []planned) (StopReason, error) {
	for i := range batch {
		p := &batch[i]
		if p.kind != runDone {
			continue
		}
		p.ran, p.recorded = true, true
		r.finalText = doneMessage(p.use.Arguments)
		if err := r.record(turn, p.use, tool.Result{Content: "Done."}, false); err != nil {
			return "", err
		}
		return StopCompleted, nil
	}
	return "", nil
}

// stopRequested returns the stop a tool result asked for, in call order.
func stopRequested(batch []planned) StopReason {
	for _, p := range batch {
		switch {
		case !p.recorded || p.result.Stop == "":
		case p.result.Stop == string(StopHandoff):
			return StopHandoff
		default:
			return StopCompleted
		}
	}
	return ""
}

// countErrors tracks turns whose executed calls all failed.
func (r *run) countErrors(batch []planned) {
	ran, failed := 0, 0
	for _, p := range batch {
		if p.recorded && p.kind == runHere {
			ran++
			if p.result.IsError {
				failed++
			}
		}
	}
	switch {
	case ran > 0 && failed == ran:
		r.st.ConsecutiveErrors++
	case ran > 0:
		r.st.ConsecutiveErrors = 0
	}
}

// pause hands client calls to the caller and confirmation calls to a human.
func (r *run) pause(batch []planned) bool {
	var client []CallRequest
	for _, p := range batch {
		switch p.kind {
		case askClient:
			client = append(client, CallRequest{ID: p.use.ID, Name: p.use.Name, Arguments: p.use.Arguments})
			r.st.Pending = append(r.st.Pending, pendingOf(p.use, PendingClient))
		case askHuman:
			r.st.Pending = append(r.st.Pending, pendingOf(p.use, PendingConfirmation))
		}
	}
	if len(client) > 0 {
		r.a.sink.Send(ClientToolRequest{Calls: client})
	}
	for _, p := range batch {
		if p.kind == askHuman {
			r.a.sink.Send(ConfirmationRequest{ID: p.use.ID, Name: p.use.Name, Arguments: p.use.Arguments})
		}
	}
	return len(r.st.Pending) > 0
}

func pendingOf(use llm.ToolUse, kind string) PendingCall {
	return PendingCall{ID: use.ID, Name: use.Name, Arguments: json.RawMessage(use.Arguments), Kind: kind}
}
