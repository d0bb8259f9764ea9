package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
)

func TestPIIVaultsKeepOneVersionedVaultPerDialogAndGoWithIt(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		a, b := mustTenant(t, st, "tenant-a"), mustTenant(t, st, "tenant-b")
		asA, asB := st.Tenant(a.ID), st.Tenant(b.ID)
		bot := mustBot(t, st, a.ID, "support")
		d := mustDialog(t, st, bot)

		wantErr(t, func() error { _, err := asA.PIIVaults().Get(ctx, d.ID); return err }(), store.ErrNotFound)
		first := &store.PIIVault{DialogID: d.ID, Nonce: []byte("n1"), Ciphertext: []byte("c1")}
		if err := asA.PIIVaults().Put(ctx, first); err != nil || first.Version != 1 {
			t.Fatalf("first put: version %d, %v", first.Version, err)
		}
		t.Run("a writer that read an older version is a conflict", func(t *testing.T) {
			stale := &store.PIIVault{DialogID: d.ID, Nonce: []byte("n0"), Ciphertext: []byte("c0")}
			wantErr(t, asA.PIIVaults().Put(ctx, stale), store.ErrConflict)
			if stale.Version != 0 {
				t.Fatalf("a failed put moved the version to %d", stale.Version)
			}
		})
		next := &store.PIIVault{DialogID: d.ID, Version: first.Version, Nonce: []byte("n2"), Ciphertext: []byte("c2")}
		if err := asA.PIIVaults().Put(ctx, next); err != nil || next.Version != 2 {
			t.Fatalf("second put: version %d, %v", next.Version, err)
		}
		got, err := asA.PIIVaults().Get(ctx, d.ID)
		if err != nil || got.Version != 2 || string(got.Ciphertext) != "c2" {
			t.Fatalf("Get = %+v, %v", got, err)
		}
		t.Run("another tenant neither reads nor writes it", func(t *testing.T) {
			wantErr(t, func() error { _, err := asB.PIIVaults().Get(ctx, d.ID); return err }(), store.ErrNotFound)
			wantErr(t, asB.PIIVaults().Put(ctx, &store.PIIVault{DialogID: d.ID, Version: 2, Nonce: []byte("x"), Ciphertext: []byte("x")}), store.ErrConflict)
			other := mustDialog(t, st, bot)
			wantErr(t, asB.PIIVaults().Put(ctx, &store.PIIVault{DialogID: other.ID, Nonce: []byte("x"), Ciphertext: []byte("x")}), store.ErrNotFound)
		})
		t.Run("retention and end-user erasure delete the vaults of the dialogs they delete", func(t *testing.T) {
			for _, erase := range []func(d *store.Dialog) error{
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
				if err := asA.PIIVaults().Put(ctx, &store.PIIVault{DialogID: old.ID, Nonce: []byte("n"), Ciphertext: []byte("c")}); err != nil {
					t.Fatal(err)
				}
				if err := erase(old); err != nil {
					t.Fatal(err)
				}
				wantErr(t, func() error { _, err := asA.PIIVaults().Get(ctx, old.ID); return err }(), store.ErrNotFound)
			}
			d = mustDialog(t, st, bot) // the dialog of the next case went with them
			if err := asA.PIIVaults().Put(ctx, &store.PIIVault{DialogID: d.ID, Nonce: []byte("n"), Ciphertext: []byte("c")}); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("deleting the dialog deletes its vault", func(t *testing.T) {
			if _, err := asA.Dialogs().Delete(ctx, d.ID, time.Now()); err != nil {
				t.Fatal(err)
			}
			wantErr(t, func() error { _, err := asA.PIIVaults().Get(ctx, d.ID); return err }(), store.ErrNotFound)
		})
	})
}
