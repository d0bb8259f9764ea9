package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
)

// A sub-run's dialog (an agent called as a tool) holds what its caller
// told it, so deleting the caller deletes it, and its own sub-runs; not
// while the caller is running.
func TestDeletingADialogDeletesItsSubRuns(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		ts := st.Tenant(tn.ID)
		b := mustBot(t, st, tn.ID, "support")
		sub := func(parent *store.Dialog) *store.Dialog {
			d := &store.Dialog{TenantID: tn.ID, BotID: b.ID, VersionNumber: 1, Status: store.DialogClosed, ParentDialogID: parent.ID, ParentCallID: "call_1"}
			if err := st.Tenant(d.TenantID).Dialogs().Create(ctx, d); err != nil {
				t.Fatal(err)
			}
			mustAppend(t, st, d, "user", store.MessageComplete)
			return d
		}
		now := time.Now()

		running := mustDialog(t, st, b)
		runningSub := sub(running)
		if _, err := ts.Leases().Take(ctx, store.Take{TenantID: tn.ID, DialogID: running.ID, Owner: "me", Now: now, TTL: time.Minute}); err != nil {
			t.Fatal(err)
		}
		if _, err := ts.Dialogs().Delete(ctx, running.ID, now); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("deleting a running dialog: %v, want a conflict", err)
		}
		if _, err := ts.Dialogs().Get(ctx, runningSub.ID); err != nil {
			t.Fatalf("the running dialog's sub-run went: %v", err)
		}

		caller := mustDialog(t, st, b)
		child := sub(caller)
		grandchild := sub(child)
		got, err := ts.Dialogs().Delete(ctx, caller.ID, now)
		if err != nil || got.Dialogs != 3 || got.Messages != 2 {
			t.Fatalf("deleted %+v, %v; want the caller and its two sub-runs", got, err)
		}
		for _, d := range []*store.Dialog{child, grandchild} {
			if _, err := ts.Dialogs().Get(ctx, d.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("sub-run %s is still there: %v", d.ID, err)
			}
		}
		kept, _, err := ts.Dialogs().List(ctx, store.DialogFilter{ParentDialogID: running.ID}, store.Page{})
		if err != nil || !sameIDs(kept, runningSub.ID) {
			t.Fatalf("sub-runs of the running dialog: %v %v", kept, err)
		}
	})
}
