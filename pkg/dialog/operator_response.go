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
