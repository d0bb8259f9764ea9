package store_test

import (
	"context"
	"os"
	"testing"

	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// TestTheNextSQLiteServerSettlesWhatADeadOneLeft: the server holding the
// data directory's lock is the only one, so what any server held when it
// starts was left by one that died: its streaming reply reads
// interrupted, and its lease and unfinished Idempotency-Key claim are
// free at once instead of after their expiry, the claim with the id its
// message was stored under.
func TestTheNextSQLiteServerSettlesWhatADeadOneLeft(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	open := func(server bool) *store.Store {
		t.Helper()
		st, err := store.Open(ctx, store.Config{DataDir: dir, Server: server})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		return st
	}
	dead := open(true)
	tn := mustTenant(t, dead, "acme")
	d := mustDialog(t, dead, mustBot(t, dead, tn.ID, "support"))
	reply := &store.Message{Kind: "assistant", Role: "assistant"}
	if _, err := dead.Tenant(tn.ID).Leases().Take(ctx, store.Take{TenantID: tn.ID, DialogID: d.ID, Owner: "dead/1", Now: now(), TTL: minute,
		First: &store.Message{Kind: "user", Role: "user", Text: "hello"}, Reply: reply}); err != nil {
		t.Fatal(err)
	}
	claimed, won, err := dead.Tenant(tn.ID).Idempotency().Claim(ctx, "k1", "fp", now(), minute)
	if !won || err != nil {
		t.Fatalf("claim %v, %v", won, err)
	}
	dead.Close() // the process is gone; its rows stay as it left them

	t.Run("a store that is not the server settles nothing", func(t *testing.T) {
		tool := open(false)
		defer tool.Close()
		if got, err := tool.Abandoned().Settle(ctx); err != nil || got != (store.Settled{}) {
			t.Fatalf("settled %+v, %v", got, err)
		}
	})
	next := open(true)
	defer next.Close()
	got, err := next.Abandoned().Settle(ctx)
	if err != nil || got != (store.Settled{Interrupted: 1, Leases: 1}) {
		t.Fatalf("settled %+v, %v", got, err)
	}
	t.Run("the cut reply reads interrupted", func(t *testing.T) {
		rows, err := next.Tenant(tn.ID).Messages().List(ctx, d.ID, 0)
		if err != nil || len(rows) != 2 || rows[1].ID != reply.ID || rows[1].Status != store.MessageInterrupted {
			t.Fatalf("messages %+v, %v", rows, err)
		}
	})
	t.Run("the dialog is free before its lease would expire", func(t *testing.T) {
		if _, err := next.Tenant(tn.ID).Leases().Take(ctx, store.Take{TenantID: tn.ID, DialogID: d.ID, Owner: "next/1", Now: now(), TTL: minute}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("the unfinished claim is the retry's at once, with its message id", func(t *testing.T) {
		rec, won, err := next.Tenant(tn.ID).Idempotency().Claim(ctx, "k1", "fp", now(), minute)
		if !won || err != nil || rec.MessageID != claimed.MessageID {
			t.Fatalf("claim %+v, %v, %v; want it won with message %s", rec, won, err, claimed.MessageID)
		}
		if rec, won, err := next.Tenant(tn.ID).Idempotency().Claim(ctx, "k1", "fp", now(), minute); won || err != nil || rec.Done() {
			t.Fatalf("a duplicate of the retry: %+v, %v, %v; want it in progress", rec, won, err)
		}
	})
}

// TestALeaseOfADeadInstanceIsFreeAtOnce: servers sharing PostgreSQL learn
// from the database which of them are alive. A dead instance's lease is
// taken as soon as another asks, long before it expires, and its cut
// reply then reads interrupted; a live instance's lease holds.
func TestALeaseOfADeadInstanceIsFreeAtOnce(t *testing.T) {
	t.Parallel()
	u := os.Getenv(storetest.EnvDatabaseURL)
	if u == "" {
		t.Skip(storetest.EnvDatabaseURL + " is not set: instances meet only on PostgreSQL")
	}
	ctx := context.Background()
	st, schemaURL := storetest.OpenPostgresServer(t, u)
	server := func() *store.Store {
		t.Helper()
		s, err := store.Open(ctx, store.Config{DatabaseURL: schemaURL, Server: true})
		if err != nil {
			t.Fatal(err)
		}
		if s.Instance() == "" {
			t.Fatal("a server store names no instance")
		}
		return s
	}
	a, b := server(), server()
	defer b.Close()
	if st.Instance() != "" {
		t.Fatalf("a store that is not a server names instance %q", st.Instance())
	}
	tn := mustTenant(t, st, "acme")
	bot := mustBot(t, st, tn.ID, "support")
	d, other := mustDialog(t, st, bot), mustDialog(t, st, bot)
	reply := &store.Message{Kind: "assistant", Role: "assistant"}
	if _, err := a.Tenant(tn.ID).Leases().Take(ctx, store.Take{TenantID: tn.ID, DialogID: d.ID, Owner: a.Instance() + "/1", Now: now(), TTL: minute,
		First: &store.Message{Kind: "user", Role: "user", Text: "hello"}, Reply: reply}); err != nil {
		t.Fatal(err)
	}
	take := func(id string) error {
		_, err := b.Tenant(tn.ID).Leases().Take(ctx, store.Take{TenantID: tn.ID, DialogID: id, Owner: b.Instance() + "/1", Now: now(), TTL: minute})
		return err
	}
	t.Run("a live instance's lease holds", func(t *testing.T) {
		wantErr(t, take(d.ID), store.ErrConflict)
	})
	t.Run("an owner that tells no liveness holds its lease until it expires", func(t *testing.T) {
		if !mustAcquire(t, st, other, "a-tool") {
			t.Fatal("a free lease was refused")
		}
		wantErr(t, take(other.ID), store.ErrConflict)
	})
	dead := mustDialog(t, st, bot) // a second dialog of a, left for its successor to settle
	if _, err := a.Tenant(tn.ID).Leases().Take(ctx, store.Take{TenantID: tn.ID, DialogID: dead.ID, Owner: a.Instance() + "/2", Now: now(), TTL: minute,
		First: &store.Message{Kind: "user", Role: "user", Text: "hello"}, Reply: &store.Message{Kind: "assistant", Role: "assistant"}}); err != nil {
		t.Fatal(err)
	}
	claimed, won, err := a.Tenant(tn.ID).Idempotency().Claim(ctx, "k1", "fp", now(), minute)
	if err != nil || !won {
		t.Fatalf("claim %v, %v", won, err)
	}
	t.Run("a live instance's Idempotency-Key claim is in progress", func(t *testing.T) {
		if rec, won, err := b.Tenant(tn.ID).Idempotency().Claim(ctx, "k1", "fp", now(), minute); won || err != nil || rec.Done() {
			t.Fatalf("claim %+v, %v, %v", rec, won, err)
		}
	})
	a.Close() // its lock connection ends, as a killed process's does
	t.Run("a dead instance's Idempotency-Key claim is the retry's at once, with its message id", func(t *testing.T) {
		rec, won, err := b.Tenant(tn.ID).Idempotency().Claim(ctx, "k1", "fp", now(), minute)
		if err != nil || !won || rec.MessageID != claimed.MessageID {
			t.Fatalf("claim %+v, %v, %v; want it won with message %s", rec, won, err, claimed.MessageID)
		}
	})
	t.Run("a dead instance's lease is taken at once", func(t *testing.T) {
		if err := take(d.ID); err != nil {
			t.Fatal(err)
		}
		rows, err := st.Tenant(tn.ID).Messages().List(ctx, d.ID, 0)
		if err != nil || len(rows) != 2 || rows[1].Status != store.MessageInterrupted {
			t.Fatalf("messages %+v, %v", rows, err)
		}
	})
	t.Run("a server starting settles the dialogs of dead instances", func(t *testing.T) {
		next := server()
		defer next.Close()
		got, err := next.Abandoned().Settle(ctx)
		// a's lease of the dialog nobody asked for; b's and the tool's stay.
		if err != nil || got != (store.Settled{Leases: 1, Interrupted: 1}) {
			t.Fatalf("settled %+v, %v", got, err)
		}
		rows, err := st.Tenant(tn.ID).Messages().List(ctx, dead.ID, 0)
		if err != nil || len(rows) != 2 || rows[1].Status != store.MessageInterrupted {
			t.Fatalf("messages %+v, %v", rows, err)
		}
		if _, err := st.Tenant(tn.ID).Leases().Get(ctx, other.ID); err != nil {
			t.Fatalf("the tool's lease: %v", err)
		}
	})
}
