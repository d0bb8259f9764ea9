package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

func TestSettlingMovesADialogsContributionOnce(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		bot := mustBot(t, st, tn.ID, "support")
		mustVersion(t, st, bot, "fp1")
		d := mustDialog(t, st, bot)
		in := st.Tenant(tn.ID).Insights()
		now := time.Now()
		hour := d.CreatedAt.UTC().Format(store.HourFormat)
		sum := func() store.Rollup {
			t.Helper()
			rows, err := in.Sum(ctx, store.RollupQuery{From: hour, To: d.CreatedAt.UTC().Add(time.Hour).Format(store.HourFormat)})
			if err != nil {
				t.Fatal(err)
			}
			var total store.Rollup
			for i := range rows {
				total.Plus(&rows[i])
			}
			return total
		}
		resolved := store.Verdict{Outcome: store.OutcomeResolved, Reason: "answered"}
		got, err := in.Settle(ctx, store.Settlement{DialogID: d.ID, Next: resolved, Now: now,
			Unanswered: []store.Unanswered{{MessageID: "msg_1", Text: "where is it", Reason: "tool_failed", CreatedAt: now}}})
		if err != nil || got.Outcome != store.OutcomeResolved || got.OutcomeAt == nil {
			t.Fatalf("settled %+v, %v", got, err)
		}
		t.Run("a second settle from the old verdict is a conflict and counts nothing", func(t *testing.T) {
			_, err := in.Settle(ctx, store.Settlement{DialogID: d.ID, Next: resolved, Now: now})
			wantErr(t, err, store.ErrConflict)
			if s := sum(); s.Dialogs != 1 || s.Resolved != 1 {
				t.Fatalf("rollup %+v", s)
			}
		})
		t.Run("a low rating moves the dialog from resolved to failed", func(t *testing.T) {
			failed := store.Verdict{Outcome: store.OutcomeFailed, Reason: "rated_down", Rating: 1}
			if _, err := in.Settle(ctx, store.Settlement{DialogID: d.ID, Prev: resolved, Next: failed, Now: now}); err != nil {
				t.Fatal(err)
			}
			if s := sum(); s.Dialogs != 1 || s.Resolved != 0 || s.Failed != 1 || s.Ratings != 1 || s.RatingSum != 1 || s.Satisfied != 0 {
				t.Fatalf("rollup %+v", s)
			}
			qs, err := in.UnansweredIn(ctx, "", now.Add(-time.Hour), now.Add(time.Hour), 10)
			if err != nil || len(qs) != 0 {
				t.Fatalf("the settle without questions left %+v, %v", qs, err)
			}
		})
		t.Run("a settled dialog is not idle", func(t *testing.T) {
			ids, err := in.Idle(ctx, now.Add(time.Hour), 10)
			if err != nil || len(ids) != 0 {
				t.Fatalf("idle %v, %v", ids, err)
			}
		})
	})
}
