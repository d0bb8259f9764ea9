package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/parleyhq/parley/pkg/store"
)

// TestDraftsArePerPersonAndTenant checks that a draft is replaced in
// place, belongs to its owner only, cannot be read or deleted through
// another tenant's handle, and is gone after Delete.
func TestDraftsArePerPersonAndTenant(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		a, b := mustTenant(t, st, "tenant-a"), mustTenant(t, st, "tenant-b")
		bot := mustBot(t, st, a.ID, "support")
		drafts := st.Tenant(a.ID).Drafts()
		for _, text := range []string{`{"name": "Sup`, `{"name": "Support"}`} {
			if err := drafts.Put(ctx, &store.BotDraft{TenantID: b.ID, BotID: bot.ID, Owner: "usr_1", Config: text}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := drafts.Get(ctx, bot.ID, "usr_1")
		if err != nil || got.Config != `{"name": "Support"}` || got.TenantID != a.ID || got.UpdatedAt.IsZero() {
			t.Fatalf("draft %+v, %v", got, err)
		}
		if _, err := drafts.Get(ctx, bot.ID, "usr_2"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another person's draft: %v", err)
		}
		other := st.Tenant(b.ID).Drafts()
		if _, err := other.Get(ctx, bot.ID, "usr_1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("read across tenants: %v", err)
		}
		if err := other.Delete(ctx, bot.ID, "usr_1"); err != nil {
			t.Fatal(err)
		}
		if _, err := drafts.Get(ctx, bot.ID, "usr_1"); err != nil {
			t.Fatalf("deleted across tenants: %v", err)
		}
		if err := drafts.Delete(ctx, bot.ID, "usr_1"); err != nil {
			t.Fatal(err)
		}
		if _, err := drafts.Get(ctx, bot.ID, "usr_1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("after delete: %v", err)
		}
	})
}
