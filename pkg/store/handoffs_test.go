package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
)

// handOff marks d handed off as a run's save does, with its handoff row.
func handOff(t *testing.T, st *store.Store, d *store.Dialog, at time.Time) {
	t.Helper()
	ctx := context.Background()
	err := st.Tx(ctx, func(tx *store.Store) error {
		if err := tx.Tenant(d.TenantID).Dialogs().SaveState(ctx, d.ID, store.DialogHandoff, "{}"); err != nil {
			return err
		}
		return tx.Tenant(d.TenantID).Handoffs().Request(ctx, d.ID, at)
	})
	if err != nil {
		t.Fatalf("hand off: %v", err)
	}
}

func TestHandoffs(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn, other := mustTenant(t, st, "acme"), mustTenant(t, st, "globex")
		ts := st.Tenant(tn.ID)
		bot := mustBot(t, st, tn.ID, "support")
		older, newer, active := mustDialog(t, st, bot), mustDialog(t, st, bot), mustDialog(t, st, bot)
		now := time.Now().UTC().Truncate(time.Second)
		handOff(t, st, newer, now)
		handOff(t, st, older, now.Add(-time.Minute))

		t.Run("the inbox lists handed-off dialogs, the longest wait first, with counts", func(t *testing.T) {
			list, counts, err := ts.Handoffs().List(ctx)
			if err != nil || len(list) != 2 || list[0].Dialog.ID != older.ID || list[1].Dialog.ID != newer.ID {
				t.Fatalf("inbox %+v, %v", list, err)
			}
			if counts != (store.InboxCounts{Waiting: 2}) || !list[0].Handoff.Waiting() {
				t.Fatalf("counts %+v, first %+v", counts, list[0].Handoff)
			}
		})
		t.Run("another tenant's inbox is empty and cannot take the dialog", func(t *testing.T) {
			list, counts, err := st.Tenant(other.ID).Handoffs().List(ctx)
			if err != nil || len(list) != 0 || counts != (store.InboxCounts{}) {
				t.Fatalf("inbox %+v %+v, %v", list, counts, err)
			}
			if _, err := st.Tenant(other.ID).Handoffs().Assign(ctx, older.ID, "u9", "Mallory", now); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("assign across tenants: %v", err)
			}
		})
		t.Run("an operator takes a waiting dialog; another is refused; the holder may take it again", func(t *testing.T) {
			h, err := ts.Handoffs().Assign(ctx, older.ID, "u1", "Alice", now)
			if err != nil || h.AssigneeName != "Alice" || h.AssignedAt == nil || !h.RequestedAt.Equal(now.Add(-time.Minute)) {
				t.Fatalf("assign: %+v, %v", h, err)
			}
			if _, err := ts.Handoffs().Assign(ctx, older.ID, "u2", "Bob", now); !errors.Is(err, store.ErrConflict) {
				t.Fatalf("second operator: %v", err)
			}
			if _, err := ts.Handoffs().Assign(ctx, older.ID, "u1", "Alice", now); err != nil {
				t.Fatalf("holder again: %v", err)
			}
			if _, counts, _ := ts.Handoffs().List(ctx); counts != (store.InboxCounts{Waiting: 1, Taken: 1}) {
				t.Fatalf("counts %+v", counts)
			}
		})
		t.Run("the dialog reads with its handoff in one call; one the bot answers has none", func(t *testing.T) {
			d, h, err := ts.Handoffs().GetWithDialog(ctx, older.ID)
			if err != nil || d.Status != store.DialogHandoff || h == nil || h.AssigneeName != "Alice" || h.AssignedAt == nil ||
				!h.RequestedAt.Equal(now.Add(-time.Minute)) {
				t.Fatalf("dialog %+v, handoff %+v, %v", d, h, err)
			}
			if d, h, err := ts.Handoffs().GetWithDialog(ctx, active.ID); err != nil || d.ID != active.ID || h != nil {
				t.Fatalf("active dialog %+v, handoff %+v, %v", d, h, err)
			}
			if _, _, err := st.Tenant(other.ID).Handoffs().GetWithDialog(ctx, older.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("across tenants: %v", err)
			}
		})
		t.Run("a dialog the bot answers cannot be taken", func(t *testing.T) {
			if _, err := ts.Handoffs().Assign(ctx, active.ID, "u1", "Alice", now); !errors.Is(err, store.ErrInactive) {
				t.Fatalf("assign active: %v", err)
			}
		})
		t.Run("releasing gives the dialog back to the bot and empties its handoff", func(t *testing.T) {
			h, err := ts.Handoffs().Release(ctx, older.ID)
			if err != nil || h.AssigneeID != "u1" {
				t.Fatalf("release: %+v, %v", h, err)
			}
			d, _ := ts.Dialogs().Get(ctx, older.ID)
			if d.Status != store.DialogActive {
				t.Fatalf("status %s", d.Status)
			}
			if _, err := ts.Handoffs().Release(ctx, older.ID); !errors.Is(err, store.ErrInactive) {
				t.Fatalf("release again: %v", err)
			}
			if _, err := ts.Handoffs().Get(ctx, older.ID); !errors.Is(err, store.ErrInactive) {
				t.Fatalf("get released: %v", err)
			}
			if d, h, err := ts.Handoffs().GetWithDialog(ctx, older.ID); err != nil || d.Status != store.DialogActive || h != nil {
				t.Fatalf("released dialog %+v, handoff %+v, %v", d, h, err)
			}
		})
		t.Run("a second handoff of the same dialog waits again, unassigned", func(t *testing.T) {
			handOff(t, st, older, now.Add(time.Minute))
			h, err := ts.Handoffs().Get(ctx, older.ID)
			if err != nil || !h.Waiting() || !h.RequestedAt.Equal(now.Add(time.Minute)) {
				t.Fatalf("handoff %+v, %v", h, err)
			}
		})
	})
}

// TestHandoffAssignRace takes one dialog from many goroutines at once:
// exactly one operator gets it, every other one a conflict.
func TestHandoffAssignRace(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		d := mustDialog(t, st, mustBot(t, st, tn.ID, "support"))
		handOff(t, st, d, time.Now())
		const operators = 8
		var wg sync.WaitGroup
		errs := make([]error, operators)
		start := make(chan struct{})
		for i := range operators {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = st.Tenant(tn.ID).Handoffs().Assign(ctx, d.ID, fmt.Sprintf("u%d", i), fmt.Sprintf("Operator %d", i), time.Now())
			}()
		}
		close(start)
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, store.ErrConflict):
				t.Fatalf("operator %d: %v", i, err)
			}
		}
		if won != 1 {
			t.Fatalf("%d operators took the dialog, want exactly 1", won)
		}
	})
}
