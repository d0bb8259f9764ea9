package dialog

import (
	"context"
	"time"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/store"
)

// countOperatorResponse counts, for analytics and /metrics, the time from
// dialog d's handoff h to row, the operator message just written, when it
// is the first operator message since the handoff (docs/insights.md). It
// counts in the hour the operator answered; a failure to read only loses
// the count, never the message.
func (ha Handoffs) countOperatorResponse(ctx context.Context, d *store.Dialog, h *store.Handoff, row *store.Message) {
	r := ha.rt
	roll, ok := rollupOf(d, row.CreatedAt)
	if !ok || h == nil {
		return
	}
	first, err := r.store.Tenant(d.TenantID).Insights().FirstMessageSince(ctx, d.ID, string(agent.KindOperator), h.RequestedAt)
	if err != nil {
		r.log.WarnContext(ctx, "dialog: time the operator's first answer", "dialog", d.ID, "err", err)
		return
	}
	if first != row.ID {
		return
	}
	// To the millisecond: PostgreSQL keeps the handoff's time to the
	// microsecond, the message's is this process's clock.
	took := max(row.CreatedAt.Sub(h.RequestedAt).Round(time.Millisecond), 0)
	roll.OperatorResponseMS, roll.OperatorResponses = took.Milliseconds(), 1
	r.meter.addRollup(roll)
	r.metrics.operatorResponse.Observe(took.Seconds())
}

// countOperatorReply counts, for analytics and /metrics, the time from the end user's
// first message that row, an operator message just written, answers (one
// written during the handoff h, after the operator's previous message) to
// row. An operator message that answers nothing new counts nothing.
func (ha Handoffs) countOperatorReply(ctx context.Context, d *store.Dialog, h *store.Handoff, row *store.Message) {
	r := ha.rt
	roll, ok := rollupOf(d, row.CreatedAt)
	if !ok || h == nil {
		return
	}
	asked, ok, err := r.store.Tenant(d.TenantID).Insights().Unanswered(ctx, d.ID, row.Seq, h.RequestedAt)
	if err != nil {
		r.log.WarnContext(ctx, "dialog: time the operator's answer", "dialog", d.ID, "err", err)
		return
	}
	if !ok {
		return
	}
	took := max(row.CreatedAt.Sub(asked).Round(time.Millisecond), 0)
	roll.OperatorReplyMS, roll.OperatorReplies = took.Milliseconds(), 1
	r.meter.addRollup(roll)
	r.metrics.operatorReply.Observe(took.Seconds())
}

// countTake counts, for analytics and /metrics, the time the dialog d
// waited from its handoff until an operator took it, when before (the
// handoff as it was) still waited and after is it taken: taking one's
// own dialog again, or passing it to another member, is no take.
func (ha Handoffs) countTake(d *store.Dialog, before, after *store.Handoff) {
	r := ha.rt
	if before == nil || !before.Waiting() || after == nil || after.AssignedAt == nil {
		return
	}
	took := max(after.AssignedAt.Sub(after.RequestedAt).Round(time.Millisecond), 0)
	r.metrics.toTake.Observe(took.Seconds())
	roll, ok := rollupOf(d, *after.AssignedAt)
	if !ok {
		return
	}
	roll.TakeMS, roll.Takes = took.Milliseconds(), 1
	roll.TakeLE.Count(took)
	r.meter.addRollup(roll)
}
