package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/parleyhq/parley/pkg/llm"
)

// Outcome is how a run ended.
type Outcome struct {
	StopReason StopReason
	// Text is the final answer: the model's last text, the done tool's
	// message, or the termination summary.
	Text  string
	Turns int
	Usage llm.Usage
	// Pending are the calls a paused run waits for.
	Pending []PendingCall
}

// maxAttempts bounds model calls per turn, failovers included, whatever the
// resolver keeps offering.
const maxAttempts = 4

// run is one Send or resume: the loop's working memory around a State.
type run struct {
	a  *Agent
	st *State
	// parent is the caller's context, used for hooks; ctx adds the timeout.
	parent context.Context
	ctx    context.Context
	cancel context.CancelFunc
	view   view
	req    llm.Request
	// tools are offered to the model: Agent.defs, plus the tools of the
	// skills loaded.
	tools []llm.ToolDefinition
	// inTurn is the turn whose turn_end is still owed, 0 when none.
	inTurn    int
	turnUsage llm.Usage
	// finalText is the done tool's message, when it was called.
	finalText string
	// extra is BeforeModelCall's addition to the system prompt of the
	// turn's call, kept across the call's retries.
	extra   string
	onDelta func(llm.Delta)
	// verdict is the Guard's refusal of the model's answer this turn.
	verdict *Verdict
}

func (a *Agent) start(ctx context.Context, st *State) *run {
	r := &run{a: a, st: st, parent: ctx, ctx: ctx, cancel: func() {}}
	if t := a.cfg.Limits.Timeout; t > 0 {
		r.ctx, r.cancel = context.WithTimeout(ctx, t)
	}
	r.view.build(a, st)
	r.tools = a.defs
	if a.skills != nil {
		r.tools = a.skills.offered(a.defs, st.Skills)
	}
	r.onDelta = func(d llm.Delta) {
		switch {
		case d.Text == "":
		case d.Type == llm.DeltaText:
			a.sink.Send(TextDelta{Text: d.Text})
		case d.Type == llm.DeltaThinking:
			a.sink.Send(ThinkingDelta{Text: d.Text})
		}
	}
	return r
}

// Send appends the user's text (with the images they sent, if any) and
// runs the loop until a stop reason. A run paused on client tools or
// confirmations is given up first: its calls get results saying the user
// moved on. The error is non-nil exactly when the stop reason is "error";
// the events have already told the client.
func (a *Agent) Send(ctx context.Context, st *State, text string, images ...llm.Image) (Outcome, error) {
	r := a.start(ctx, st)
	defer r.cancel()
	st.resetRun()
	if err := r.answerLeftovers(); err != nil {
		return r.fail(err)
	}
	if err := r.add(Message{Kind: KindUser, Message: llm.UserMessage(text, images...)}); err != nil {
		return r.fail(err)
	}
	if v, err := r.screen(WhereInput, text); err != nil || v != nil {
		if err != nil {
			return r.fail(err)
		}
		return r.guarded(v)
	}
	return r.loop()
}

// Continue runs the loop on the conversation as it stands, without a new
// user text: for a user message already stored whose answer was cut (its
// server died), so its retry answers it without adding it twice. Calls
// left open are answered first, as Send does.
func (a *Agent) Continue(ctx context.Context, st *State) (Outcome, error) {
	r := a.start(ctx, st)
	defer r.cancel()
	st.resetRun()
	if err := r.answerLeftovers(); err != nil {
		return r.fail(err)
	}
	return r.loop()
}

// answerLeftovers gives every call left open by a paused or interrupted run a
// result, so the history is one the model's API accepts.
func (r *run) answerLeftovers() error {
	for _, p := range r.st.Pending {
		use := llm.ToolUse{ID: p.ID, Name: p.Name, Arguments: p.Arguments}
		if err := r.recordSkipped(0, use, skippedMovedOn); err != nil {
			return err
		}
	}
	r.st.Pending = nil
	for _, use := range r.st.unanswered() {
		if err := r.recordSkipped(0, use, skippedInterrupted); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) loop() (Outcome, error) {
	for {
		reason, err := r.turn()
		if err != nil {
			return r.fail(err)
		}
		if r.verdict != nil {
			return r.guarded(r.verdict)
		}
		if reason != "" {
			return r.finish(reason)
		}
	}
}

// turn is one model call and the tool calls it asks for. It returns the stop
// reason when the run ends here, "" to go on.
func (r *run) turn() (StopReason, error) {
	turn := r.st.Turns + 1
	r.turnUsage = llm.Usage{}
	resp, choice, err := r.callModel(turn)
	if err != nil {
		return "", err
	}
	r.st.Turns = turn
	r.count(resp.Usage)
	msg := Message{Kind: KindAssistant, Message: resp.Message, Model: choice.Model,
		Provider: choice.Provider.Name(), Turn: turn, Usage: resp.Usage}
	msg.Role = llm.RoleAssistant
	calls := msg.ToolUses()
	if len(calls) == 0 {
		// The answer is screened before it is stored: a refused one is
		// never kept, only the Verdict's reply (guarded).
		if r.verdict, err = r.screen(WhereOutput, msg.Text()); err != nil {
			return "", err
		}
	}
	if r.verdict == nil {
		if err := r.add(msg); err != nil {
			return "", err
		}
	}
	r.view.report(resp.Usage)
	ok, err := r.meter(TurnInfo{Turn: turn, Purpose: PurposeTurn, Model: choice.Model,
		Provider: msg.Provider, Usage: resp.Usage, ToolCalls: len(calls)})
	if err != nil || r.verdict != nil {
		return "", err
	}
	// Loop memory only learns batches that would run.
	looping := ok && len(calls) > 0 && r.st.Loop.observe(callSignature(calls), r.a.cfg.Limits.LoopRepeats)
	var reason StopReason
	switch {
	case !ok:
		reason, err = StopQuota, r.skipAll(turn, calls, skippedStopped)
	case len(calls) == 0:
		reason, err = r.answered()
	case looping:
		reason, err = StopLoopDetected, r.skipAll(turn, calls, skippedLoop)
	default:
		reason, err = r.runTools(turn, calls)
	}
	if err != nil {
		return "", err
	}
	if reason == "" {
		reason = r.limitReached()
	}
	r.endTurn(reason)
	return reason, nil
}

// answered handles a model answer without tool calls: queued user input
// keeps the run going, so does a missing done call; otherwise it is complete.
func (r *run) answered() (StopReason, error) {
	queued := append(r.a.drainSteering(), r.a.drainFollowUp()...)
	if len(queued) > 0 {
		return "", r.addUserTexts(queued)
	}
	if r.a.cfg.RequireDoneTool {
		nudge := Message{Kind: KindUser, Message: llm.UserText(doneNudge), Origin: OriginLoop, Turn: r.st.Turns}
		return "", r.add(nudge)
	}
	return StopCompleted, nil
}

func (r *run) addUserTexts(texts []string) error {
	for _, t := range texts {
		if err := r.add(Message{Kind: KindUser, Message: llm.UserText(t)}); err != nil {
			return err
		}
	}
	return nil
}

// limitReached returns the limit that forbids another turn, or "".
func (r *run) limitReached() StopReason {
	lim := r.a.cfg.Limits
	switch {
	case r.timedOut():
		return StopTimeout
	case r.st.ConsecutiveErrors >= lim.MaxConsecutiveErrors:
		return StopTooManyErrors
	case r.st.Turns >= lim.MaxTurns:
		return StopMaxTurns
	case lim.TokenBudget > 0 && r.st.Usage.Total() >= lim.TokenBudget:
		return StopTokenBudget
	}
	return ""
}

// timedOut tells the run's own deadline from the caller giving up.
func (r *run) timedOut() bool {
	return errors.Is(r.ctx.Err(), context.DeadlineExceeded) && r.parent.Err() == nil
}

func (r *run) endTurn(reason StopReason) {
	if r.inTurn == 0 {
		return
	}
	r.a.sink.Send(TurnEnd{Turn: r.inTurn, StopReason: reason, Usage: r.turnUsage})
	r.inTurn = 0
}

// finish ends the run with reason: the termination summary when configured,
// a stop note for the dialog view, and the done event.
func (r *run) finish(reason StopReason) (Outcome, error) {
	r.endTurn(reason)
	text := r.finalText
	if text == "" {
		text = r.st.lastAssistantText()
	}
	if r.a.cfg.TerminationSummary && reason.summarised() {
		summary, err := r.summarise(reason)
		if err != nil {
			r.notify(fmt.Errorf("agent: termination summary: %w", err))
		} else if summary != "" {
			text = summary
		}
	}
	if reason != StopCompleted && reason != StopPaused && reason != StopGuardrail { // guarded wrote its own note
		note := Message{Kind: KindSystemEvent, Message: llm.UserText("run stopped: " + string(reason)), Origin: OriginLoop, Turn: r.st.Turns}
		if err := r.add(note); err != nil {
			return r.fail(err)
		}
	}
	r.st.StopReason = reason
	r.a.sink.Send(Done{Text: text, Turns: r.st.Turns, Usage: r.st.Usage, StopReason: reason})
	return Outcome{StopReason: reason, Text: text, Turns: r.st.Turns, Usage: r.st.Usage, Pending: r.st.Pending}, nil
}

// fail ends the run with "error" (or "timeout" when the deadline caused it).
func (r *run) fail(err error) (Outcome, error) {
	if r.timedOut() {
		return r.finish(StopTimeout)
	}
	if errors.Is(context.Cause(r.parent), ErrCanceled) {
		// Stopped on purpose: the stop note is still written, so the
		// hooks get a context the cancel does not end.
		r.parent = context.WithoutCancel(r.parent)
		return r.finish(StopCanceled)
	}
	r.notify(err)
	ev := describe(err)
	// The transcript says the run failed and why, in words safe for the end
	// user, so a dialog log shows it. A note that cannot be written fails
	// for the reason just reported (the store is down), so its error is
	// not reported twice.
	note := Message{Kind: KindSystemEvent, Message: llm.UserText("run failed: " + ev.Message), Origin: OriginLoop, Turn: r.st.Turns}
	_ = r.add(note)
	r.endTurn(StopError)
	r.a.sink.Send(ev)
	r.st.StopReason = StopError
	r.a.sink.Send(Done{Turns: r.st.Turns, Usage: r.st.Usage, StopReason: StopError})
	return Outcome{StopReason: StopError, Turns: r.st.Turns, Usage: r.st.Usage}, err
}

func (r *run) notify(err error) {
	if h := r.a.cfg.Hooks.OnError; h != nil {
		h(r.parent, err)
	}
}

// add appends m to the State and the model's view, then lets the
// application persist it.
func (r *run) add(m Message) error {
	if m.Time.IsZero() {
		m.Time = r.a.cfg.Now()
	}
	r.st.Messages = append(r.st.Messages, m)
	if m.Kind == KindSummary {
		r.view.build(r.a, r.st)
	} else {
		r.view.add(r.a, r.st.Messages, len(r.st.Messages)-1)
	}
	if h := r.a.cfg.Hooks.OnMessage; h != nil {
		if err := h(r.parent, m); err != nil {
			return &HookError{Hook: "OnMessage", Err: err}
		}
	}
	return nil
}

// count adds one model call's usage everywhere it is totalled.
func (r *run) count(u llm.Usage) {
	r.turnUsage = r.turnUsage.Add(u)
	r.st.Usage = r.st.Usage.Add(u)
	r.st.TotalUsage = r.st.TotalUsage.Add(u)
}

// meter reports a model call to OnTurnEnd.
func (r *run) meter(info TurnInfo) (bool, error) {
	h := r.a.cfg.Hooks.OnTurnEnd
	if h == nil {
		return true, nil
	}
	info.RunUsage = r.st.Usage
	ok, err := h(r.parent, info)
	if err != nil {
		return false, &HookError{Hook: "OnTurnEnd", Err: err}
	}
	return ok, nil
}
