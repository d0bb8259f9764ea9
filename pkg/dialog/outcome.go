package dialog

import (
	"context"
	"errors"
	"time"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/store"
)

// This file computes how a dialog ended, its outcome, when it closes or
// goes idle (docs/insights.md gives the rules), and stores it with the
// analytics rollups and the questions the bot could not answer.

// Dialog outcomes.
const (
	OutcomeResolved  = store.OutcomeResolved
	OutcomeHandedOff = store.OutcomeHandedOff
	OutcomeAbandoned = store.OutcomeAbandoned
	OutcomeFailed    = store.OutcomeFailed
)

// Why a dialog got its outcome (Dialog.OutcomeReason).
const (
	reasonHandoff      = "handoff"
	reasonRunFailed    = "run_failed"
	reasonRatedDown    = "rated_down"
	reasonCameBack     = "came_back"
	reasonCannotAnswer = "cannot_answer"
	reasonNoMessage    = "no_message"
	reasonNoReply      = "no_reply"
	reasonAnswered     = "answered"
)

// Why a question counts as unanswered.
const (
	unansweredHandoff      = "handoff"
	unansweredCannotAnswer = "cannot_answer"
	unansweredToolFailed   = "tool_failed"
	unansweredRatedDown    = "rated_down"
)

// cannotAnswerTool is the native tool the model calls when it cannot help.
const cannotAnswerTool = "cannot_answer"

// handoffTool is the native tool that hands a dialog to a person.
const handoffTool = "handoff_to_human"

// defaultIdle is the window a question asked again unresolves a dialog
// in, for tenants that compute outcomes only at close.
const defaultIdle = 30 * time.Minute

// settleTries bounds how often settle computes again after another
// server settled the same dialog first.
const settleTries = 4

// settle computes the outcome of the tenant's dialog and stores it
// through st (the runtime's store, or a transaction's), with its rollups
// and unanswered questions. decide computes one for a dialog that has
// none yet; a dialog that has one always gets it computed again. change,
// when set, first adjusts the verdict (a rating given, a question asked
// again). Previews and sub-runs never get an outcome.
func (i Insights) settle(ctx context.Context, st *store.Store, tenantID, dialogID string, decide bool, change func(*store.Verdict)) (*store.Dialog, error) {
	r := i.rt
	for try := 1; ; try++ {
		d, err := r.Insights().settleOnce(ctx, st, tenantID, dialogID, decide, change)
		if errors.Is(err, store.ErrConflict) && try < settleTries {
			continue
		}
		return d, err
	}
}

func (i Insights) settleOnce(ctx context.Context, st *store.Store, tenantID, dialogID string, decide bool, change func(*store.Verdict)) (*store.Dialog, error) {
	r := i.rt
	t := st.Tenant(tenantID)
	f, err := t.Insights().Facts(ctx, dialogID)
	if err != nil {
		return nil, err
	}
	d := f.Dialog
	prev := store.Verdict{Outcome: d.Outcome, Reason: d.OutcomeReason, Rating: d.Rating, RatingComment: d.RatingComment, CameBackIn: f.CameBackIn}
	next := prev
	if change != nil {
		change(&next)
	}
	var unanswered []store.Unanswered
	if (decide || prev.Outcome != "") && !d.Preview && d.ParentDialogID == "" {
		msgs, err := t.Messages().List(ctx, d.ID, 0)
		if err != nil {
			return nil, err
		}
		calls, err := t.Messages().ToolCalls(ctx, d.ID)
		if err != nil {
			return nil, err
		}
		ratings, err := t.Feedback().List(ctx, d.ID)
		if err != nil {
			return nil, err
		}
		next.Outcome, next.Reason, unanswered = judge(f, next, msgs, calls, ratings)
	}
	if next == prev && next.Outcome == "" {
		return d, nil
	}
	return t.Insights().Settle(ctx, store.Settlement{DialogID: d.ID, Prev: prev, Next: next, Unanswered: unanswered, Now: r.now()})
}

// judge decides a dialog's outcome from its facts, its verdict so far
// (rating, a question asked again), messages, tool calls and feedback, in
// the order docs/insights.md gives, with the user messages it left
// unanswered.
func judge(f *store.DialogFacts, v store.Verdict, msgs []store.Message, calls []store.ToolCall, ratings []store.Feedback) (string, string, []store.Unanswered) {
	t := newTranscript(msgs)
	var un unansweredSet
	for _, c := range calls {
		switch {
		case c.Name == handoffTool:
			un.add(t.askedBefore(c.MessageID), unansweredHandoff)
		case c.Name == cannotAnswerTool:
			un.add(t.askedBefore(c.MessageID), unansweredCannotAnswer)
		case c.IsError:
			un.add(t.askedBefore(c.MessageID), unansweredToolFailed)
		}
	}
	for i := range msgs {
		if knowledgeMissed(&msgs[i]) {
			un.add(t.askedBefore(msgs[i].ID), unansweredKnowledgeMiss)
		}
	}
	ratedDown := v.Rating > 0 && v.Rating < 3
	for _, fb := range ratings {
		if fb.Rating == store.FeedbackDown {
			ratedDown = true
			un.add(t.askedBefore(fb.MessageID), unansweredRatedDown)
		}
	}
	if f.HandedOff {
		un.add(t.lastUser(), unansweredHandoff)
	}
	if v.Rating > 0 && v.Rating < 3 {
		un.add(t.firstUser(), unansweredRatedDown)
	}
	out := func(outcome, reason string) (string, string, []store.Unanswered) { return outcome, reason, un.rows }
	switch {
	case f.HandedOff:
		return out(OutcomeHandedOff, reasonHandoff)
	case f.RunFailures > 0:
		return out(OutcomeFailed, reasonRunFailed)
	case ratedDown:
		return out(OutcomeFailed, reasonRatedDown)
	case v.CameBackIn != "":
		return out(OutcomeFailed, reasonCameBack)
	case un.has(unansweredCannotAnswer):
		return out(OutcomeFailed, reasonCannotAnswer)
	case t.firstUser() == nil:
		return out(OutcomeAbandoned, reasonNoMessage)
	case !t.lastAnswered():
		return out(OutcomeAbandoned, reasonNoReply)
	}
	return out(OutcomeResolved, reasonAnswered)
}

// transcript finds, in a dialog's messages, the user messages that
// signals follow.
type transcript struct {
	msgs []store.Message
	at   map[string]int // message id -> index in msgs
}

func newTranscript(msgs []store.Message) transcript {
	t := transcript{msgs: msgs, at: make(map[string]int, len(msgs))}
	for i := range msgs {
		t.at[msgs[i].ID] = i
	}
	return t
}

func isUser(m *store.Message) bool { return m.Kind == string(agent.KindUser) && m.Text != "" }

// askedBefore is the last user message before the message with id, or
// the last user message when id is unknown.
func (t transcript) askedBefore(id string) *store.Message {
	end, ok := t.at[id]
	if !ok {
		end = len(t.msgs)
	}
	for i := end - 1; i >= 0; i-- {
		if isUser(&t.msgs[i]) {
			return &t.msgs[i]
		}
	}
	return nil
}

func (t transcript) lastUser() *store.Message { return t.askedBefore("") }

func (t transcript) firstUser() *store.Message {
	for i := range t.msgs {
		if isUser(&t.msgs[i]) {
			return &t.msgs[i]
		}
	}
	return nil
}

// lastAnswered says a complete assistant message follows the last user
// message: the user did not leave before the bot answered.
func (t transcript) lastAnswered() bool {
	last := t.lastUser()
	if last == nil {
		return false
	}
	for i := t.at[last.ID] + 1; i < len(t.msgs); i++ {
		m := &t.msgs[i]
		if m.Kind == string(agent.KindAssistant) && m.Status == store.MessageComplete {
			return true
		}
	}
	return false
}

// unansweredSet keeps one unanswered row per user message, with the
// first reason found.
type unansweredSet struct {
	rows    []store.Unanswered
	reasons map[string]bool
}

func (u *unansweredSet) add(m *store.Message, reason string) {
	if m == nil {
		return
	}
	if u.reasons == nil {
		u.reasons = map[string]bool{}
	}
	u.reasons[reason] = true
	for _, r := range u.rows {
		if r.MessageID == m.ID {
			return
		}
	}
	u.rows = append(u.rows, store.Unanswered{MessageID: m.ID, Text: m.Text, Reason: reason, CreatedAt: m.CreatedAt})
}

func (u *unansweredSet) has(reason string) bool { return u.reasons[reason] }

// cameBack unresolves the end user's recent resolved dialogs with the
// same bot in which they asked what they ask again in d: their outcome
// becomes failed (came_back). Recent is within the tenant's idle period
// before d started.
func (in Insights) cameBack(ctx context.Context, d *store.Dialog) error {
	r := in.rt
	if d.UserID == "" || d.Preview || d.ParentDialogID != "" {
		return nil
	}
	t := r.store.Tenant(d.TenantID)
	msgs, err := t.Messages().List(ctx, d.ID, 0)
	if err != nil {
		return err
	}
	asked := newTranscript(msgs).firstUser()
	if asked == nil {
		return nil
	}
	window := defaultIdle
	if tenant, err := r.store.Tenants().Get(ctx, d.TenantID); err == nil && tenant.IdleMinutes > 0 {
		window = time.Duration(tenant.IdleMinutes) * time.Minute
	}
	earlier, err := t.Insights().Resolved(ctx, d.BotID, d.UserID, d.ID, d.CreatedAt.Add(-window))
	if err != nil {
		return err
	}
	for _, id := range earlier {
		before, err := t.Messages().List(ctx, id, 0)
		if err != nil {
			return err
		}
		same := false
		for i := range before {
			same = same || (isUser(&before[i]) && sameQuestionAs(before[i].Text, asked.Text))
		}
		if !same {
			continue
		}
		if _, err := r.Insights().settle(ctx, r.store, d.TenantID, id, false, func(v *store.Verdict) { v.CameBackIn = d.ID }); err != nil {
			return err
		}
	}
	return nil
}

// IdleBatch bounds how many dialogs of one tenant an idle sweep settles.
const IdleBatch = 100

// SweepIdle computes the outcome of every dialog that has been quiet
// for its tenant's idle period (IdleMinutes; tenants with 0 wait for the
// close), at most IdleBatch per tenant, and returns how many it settled.
// Several servers may sweep at once: Insights.Settle counts a dialog
// once. Call it again while it settles a full batch.
func (i Insights) SweepIdle(ctx context.Context) (int, error) {
	r := i.rt
	tenants, err := r.store.Tenants().WithIdlePeriod(ctx)
	if err != nil {
		return 0, err
	}
	now, total := r.now(), 0
	for _, tn := range tenants {
		ids, err := r.store.Tenant(tn.ID).Insights().Idle(ctx, now.Add(-time.Duration(tn.IdleMinutes)*time.Minute), IdleBatch)
		if err != nil {
			return total, err
		}
		for _, id := range ids {
			if err := r.Insights().settleNew(ctx, tn.ID, id); err != nil {
				return total, err
			}
			total++
		}
	}
	return total, nil
}

// settleNew computes a dialog's first outcome and then whether its
// question unresolves an earlier dialog.
func (i Insights) settleNew(ctx context.Context, tenantID, dialogID string) error {
	r := i.rt
	d, err := r.Insights().settle(ctx, r.store, tenantID, dialogID, true, nil)
	if err != nil {
		return err
	}
	r.metrics.outcomes.WithLabelValues(d.Outcome).Inc()
	return r.Insights().cameBack(ctx, d)
}
