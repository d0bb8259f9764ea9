package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
)

func mustRemember(t *testing.T, st *store.Store, b *store.Bot, user, key, value string, at time.Time) *store.MemoryNote {
	t.Helper()
	n := &store.MemoryNote{TenantID: b.TenantID, BotID: b.ID, UserID: user, Key: key, Value: value, DialogID: "dlg_x", UpdatedAt: at}
	if err := st.Tenant(n.TenantID).Memory().Remember(context.Background(), n, 3); err != nil {
		t.Fatalf("remember %s: %v", key, err)
	}
	return n
}

func noteValues(notes []store.MemoryNote) []string {
	out := []string{}
	for _, n := range notes {
		out = append(out, n.Key+"="+n.Value)
	}
	return out
}

func TestMemoryNotes(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		acme, other := mustTenant(t, st, "acme"), mustTenant(t, st, "other")
		ts := st.Tenant(acme.ID)
		support, sales := mustBot(t, st, acme.ID, "support"), mustBot(t, st, acme.ID, "sales")
		elsewhere := mustBot(t, st, other.ID, "support")
		t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
		first := mustRemember(t, st, support, "ann", "name", "Ann", t0)
		mustRemember(t, st, support, "ann", "plan", "gold", t0.Add(time.Minute))
		mustRemember(t, st, sales, "ann", "budget", "5k", t0.Add(2*time.Minute))
		mustRemember(t, st, support, "bob", "name", "Bob", t0.Add(3*time.Minute))
		mustRemember(t, st, elsewhere, "ann", "name", "Other Ann", t0.Add(4*time.Minute))

		t.Run("a bot recalls its own notes about one user, newest first", func(t *testing.T) {
			got, err := ts.Memory().Notes(ctx, support.ID, "ann")
			if err != nil || len(got) != 2 || got[0].Key != "plan" || got[1].Key != "name" || got[1].Value != "Ann" {
				t.Fatalf("notes %v, %v", noteValues(got), err)
			}
		})
		t.Run("remembering a key again replaces its value and keeps its id", func(t *testing.T) {
			again := mustRemember(t, st, support, "ann", "name", "Ann Lee", t0.Add(5*time.Minute))
			got, _ := ts.Memory().Notes(ctx, support.ID, "ann")
			if again.ID != first.ID || len(got) != 2 || got[0].Value != "Ann Lee" || !got[0].CreatedAt.Equal(t0) {
				t.Fatalf("notes %v; id %s, first %s", noteValues(got), again.ID, first.ID)
			}
		})
		t.Run("a full memory refuses a new key but takes an existing one", func(t *testing.T) {
			mustRemember(t, st, support, "ann", "city", "Oslo", t0.Add(6*time.Minute))
			n := &store.MemoryNote{TenantID: acme.ID, BotID: support.ID, UserID: "ann", Key: "pet", Value: "cat", UpdatedAt: t0}
			if err := st.Tenant(n.TenantID).Memory().Remember(ctx, n, 3); !errors.Is(err, store.ErrMemoryFull) {
				t.Fatalf("a fourth note: %v, want ErrMemoryFull", err)
			}
			mustRemember(t, st, support, "ann", "city", "Bergen", t0.Add(7*time.Minute))
		})
		t.Run("the user's notes across the tenant's bots, never another tenant's", func(t *testing.T) {
			got, err := ts.Memory().UserNotes(ctx, "ann")
			if err != nil || len(got) != 4 {
				t.Fatalf("notes %v, %v", noteValues(got), err)
			}
			for _, n := range got {
				if n.TenantID != acme.ID || n.UserID != "ann" {
					t.Fatalf("note %+v is not acme's about ann", n)
				}
			}
		})
		t.Run("forget deletes by key; another tenant cannot delete by id", func(t *testing.T) {
			if ok, err := ts.Memory().Forget(ctx, support.ID, "ann", "city"); !ok || err != nil {
				t.Fatalf("forget: %v %v", ok, err)
			}
			if ok, _ := ts.Memory().Forget(ctx, support.ID, "ann", "city"); ok {
				t.Fatal("forgot a note twice")
			}
			if err := st.Tenant(other.ID).Memory().Delete(ctx, "ann", first.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("another tenant deleted a note: %v", err)
			}
			if err := ts.Memory().Delete(ctx, "bob", first.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("a note deleted under another user: %v", err)
			}
		})
		t.Run("erasing the end user deletes their notes with every bot, and no one else's", func(t *testing.T) {
			got, err := ts.Dialogs().EraseEndUser(ctx, "ann", time.Now())
			if err != nil || got.Notes != 3 {
				t.Fatalf("erased %+v, %v", got, err)
			}
			if left, _ := ts.Memory().UserNotes(ctx, "ann"); len(left) != 0 {
				t.Fatalf("left %v", noteValues(left))
			}
			if left, _ := ts.Memory().UserNotes(ctx, "bob"); len(left) != 1 {
				t.Fatalf("bob's notes went too: %v", noteValues(left))
			}
			if left, _ := st.Tenant(other.ID).Memory().UserNotes(ctx, "ann"); len(left) != 1 {
				t.Fatalf("the other tenant's ann lost notes: %v", noteValues(left))
			}
		})
		t.Run("retention deletes notes last written before the cutoff", func(t *testing.T) {
			mustRemember(t, st, support, "bob", "recent", "yes", t0.Add(time.Hour))
			n, err := ts.Memory().DeleteStale(ctx, t0.Add(30*time.Minute), 100)
			if err != nil || n != 1 {
				t.Fatalf("deleted %d, %v", n, err)
			}
			if left, _ := ts.Memory().UserNotes(ctx, "bob"); len(left) != 1 || left[0].Key != "recent" {
				t.Fatalf("left %v", noteValues(left))
			}
		})
		t.Run("deleting the bot deletes its notes", func(t *testing.T) {
			if err := ts.Bots().Delete(ctx, support.ID); err != nil {
				t.Fatal(err)
			}
			if left, _ := ts.Memory().UserNotes(ctx, "bob"); len(left) != 0 {
				t.Fatalf("left %v", noteValues(left))
			}
		})
	})
}
