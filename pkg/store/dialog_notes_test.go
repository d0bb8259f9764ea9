package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
)

func TestDialogNotesStayInTheirTenantAndGoWithTheirDialog(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		a, b := mustTenant(t, st, "tenant-a"), mustTenant(t, st, "tenant-b")
		asA, asB := st.Tenant(a.ID), st.Tenant(b.ID)
		bot := mustBot(t, st, a.ID, "support")
		d := mustDialog(t, st, bot)

		for _, text := range []string{"refund promised", "called back"} {
			n := &store.DialogNote{DialogID: d.ID, AuthorID: "u1", AuthorName: "ada", Text: text, CreatedAt: time.Now()}
			if err := asA.DialogNotes().Add(ctx, n); err != nil || n.ID == "" {
				t.Fatalf("add %q: %+v, %v", text, n, err)
			}
		}
		got, err := asA.DialogNotes().List(ctx, d.ID)
		if err != nil || len(got) != 2 || got[0].Text != "refund promised" || got[1].Text != "called back" {
			t.Fatalf("List = %+v, %v", got, err)
		}
		t.Run("another tenant neither reads nor writes them", func(t *testing.T) {
			if got, err := asB.DialogNotes().List(ctx, d.ID); err != nil || len(got) != 0 {
				t.Fatalf("tenant b lists %+v, %v", got, err)
			}
			wantErr(t, asB.DialogNotes().Add(ctx, &store.DialogNote{DialogID: d.ID, AuthorID: "x", AuthorName: "x", Text: "x"}), store.ErrNotFound)
		})
		t.Run("deletion, retention and end-user erasure delete them", func(t *testing.T) {
			for _, erase := range []func(d *store.Dialog) error{
				func(d *store.Dialog) error { _, err := asA.Dialogs().Delete(ctx, d.ID, time.Now()); return err },
				func(*store.Dialog) error {
					_, err := asA.Dialogs().DeleteInactive(ctx, time.Now().Add(time.Hour), time.Now(), 100)
					return err
				},
				func(d *store.Dialog) error {
					_, err := asA.Dialogs().EraseEndUser(ctx, d.UserID, time.Now())
					return err
				},
			} {
				old := mustDialog(t, st, bot)
				if err := asA.DialogNotes().Add(ctx, &store.DialogNote{DialogID: old.ID, AuthorID: "u1", AuthorName: "ada", Text: "secret"}); err != nil {
					t.Fatal(err)
				}
				if err := erase(old); err != nil {
					t.Fatal(err)
				}
				if left, err := asA.DialogNotes().List(ctx, old.ID); err != nil || len(left) != 0 {
					t.Fatalf("notes outlive their dialog: %+v, %v", left, err)
				}
			}
		})
	})
}
