package dialog

import (
	"context"
	"time"
)

// RetentionBatch bounds how many dialogs of one tenant a sweep deletes in
// one commit.
const RetentionBatch = 100

// SweepRetention deletes, for every tenant with a retention period, at
// most RetentionBatch of its dialogs whose last activity is older than
// that period (and as many memory notes last written before it), and
// returns how many dialogs it deleted. Dialogs a live run holds
// are left for a later sweep. Several servers may sweep at once: each
// deletes what is still there. Call it again while it returns a full
// batch.
func (d Dialogs) SweepRetention(ctx context.Context) (Erased, error) {
	r := d.rt
	tenants, err := r.store.Tenants().WithRetention(ctx)
	if err != nil {
		return Erased{}, err
	}
	var total Erased
	now := r.now()
	for _, t := range tenants {
		cutoff := now.Add(-time.Duration(t.RetentionDays) * 24 * time.Hour)
		got, err := r.store.Tenant(t.ID).Dialogs().DeleteInactive(ctx, cutoff, now, RetentionBatch)
		if err != nil {
			return total, err
		}
		if err := r.Memory().sweepMemory(ctx, t.ID, cutoff); err != nil {
			return total, err
		}
		for _, id := range got.IDs {
			r.history.forget(t.ID, id)
		}
		r.metrics.deleted.WithLabelValues("retention").Add(float64(got.Dialogs))
		total.Dialogs += got.Dialogs
		total.Messages += got.Messages
		if got.Dialogs > 0 {
			r.log.InfoContext(ctx, "retention: dialogs deleted", "tenant", t.ID, "dialogs", got.Dialogs,
				"messages", got.Messages, "retention_days", t.RetentionDays)
		}
	}
	return total, nil
}
