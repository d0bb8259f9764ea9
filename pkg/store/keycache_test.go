package store_test

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
	"gorm.io/gorm"
)

// TestARevokedKeyStopsWorkingInEveryProcess: on PostgreSQL a process
// remembers the keys it authenticated, so their reads leave the request
// path; a key revoked by another process sharing the database must still
// stop working there as the revocation commits, and a process that stops
// hearing revocations must stop remembering until it hears them again.
func TestARevokedKeyStopsWorkingInEveryProcess(t *testing.T) {
	t.Parallel()
	url := os.Getenv(storetest.EnvDatabaseURL)
	if url == "" {
		t.Skip(storetest.EnvDatabaseURL + " is not set; on SQLite the server has its file to itself (TestAnSQLiteServerHasItsFileToItself)")
	}
	ctx := context.Background()
	st, other := storetest.OpenPostgresTwice(t, url)
	reads := countKeyReads(t, st)
	tn := mustTenant(t, st, "acme")
	key := func(hash string) *store.APIKey {
		k := &store.APIKey{TenantID: tn.ID, Name: hash, Kind: "sk", Scopes: store.StringList{"chat"}, Hash: hash}
		if err := st.Tenant(k.TenantID).Keys().Create(ctx, k); err != nil {
			t.Fatal(err)
		}
		return k
	}
	// read reads the key with this hash in st and says whether that took
	// a statement.
	read := func(hash string) (*store.APIKey, bool) {
		t.Helper()
		before := reads.Load()
		k, err := st.KeyAuth().ByHash(ctx, hash)
		if err != nil {
			t.Fatal(err)
		}
		return k, reads.Load() > before
	}
	// eventually waits for cond, which the store's listener makes true in
	// its own time.
	eventually := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("still not %s after 10 s", what)
			}
		}
	}
	remembered := func(hash string) func() bool {
		return func() bool { _, fromDB := read(hash); return !fromDB }
	}

	t.Run("a key read once is read from memory after", func(t *testing.T) {
		k := key("first")
		eventually("remembered", remembered(k.Hash))
	})
	t.Run("another process's revocation reaches this one", func(t *testing.T) {
		k := key("second")
		eventually("remembered", remembered(k.Hash))
		if _, err := other.Tenant(tn.ID).Keys().Revoke(ctx, k.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		eventually("revoked here", func() bool { got, _ := read(k.Hash); return got.RevokedAt != nil })
	})
	t.Run("its own revocation is seen by its very next read", func(t *testing.T) {
		k := key("third")
		eventually("remembered", remembered(k.Hash))
		if _, err := st.Tenant(tn.ID).Keys().Revoke(ctx, k.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		if got, _ := read(k.Hash); got.RevokedAt == nil {
			t.Fatal("the revoking process still takes the key for active")
		}
	})
	t.Run("a process that stops hearing revocations reads every key until it hears again", func(t *testing.T) {
		k := key("fourth")
		eventually("remembered", remembered(k.Hash))
		// Ends every store's listener in the database, other packages'
		// too: losing one only costs them their memory for a moment.
		err := st.DB().Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE application_name = 'parley key revocations' AND pid <> pg_backend_pid()`).Error
		if err != nil {
			t.Fatal(err)
		}
		eventually("reading from the database", func() bool { _, fromDB := read(k.Hash); return fromDB })
		// Heard by nobody in st: its listener is gone.
		if _, err := other.Tenant(tn.ID).Keys().Revoke(ctx, k.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		if got, _ := read(k.Hash); got.RevokedAt == nil {
			t.Fatal("a revocation made while the listener was away went unseen")
		}
		eventually("remembered again", remembered(k.Hash))
		if got, _ := read(k.Hash); got.RevokedAt == nil {
			t.Fatal("the key remembered after the listener came back is not revoked")
		}
	})
}

// countKeyReads counts the statements st runs that read api_keys.
func countKeyReads(t *testing.T, st *store.Store) *atomic.Int64 {
	t.Helper()
	n := &atomic.Int64{}
	err := st.DB().Callback().Query().After("*").Register("test:key_reads", func(db *gorm.DB) {
		if db.Statement.Table == "api_keys" {
			n.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAnSQLiteServerHasItsFileToItself: on SQLite the server holds the
// data directory for itself, so every revocation of a key is its own, and
// it may remember the keys it read; the command-line tools open the file
// beside it.
func TestAnSQLiteServerHasItsFileToItself(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	server := func() (*store.Store, error) { return store.Open(ctx, store.Config{DataDir: dir, Server: true}) }
	st, err := server()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}

	t.Run("a second server on the file is refused, saying why", func(t *testing.T) {
		other, err := server()
		if err == nil {
			other.Close()
			t.Fatal("a second server opened the file")
		}
		if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "PARLEY_DATABASE_URL") {
			t.Fatalf("error %q names neither the directory nor the way out", err)
		}
	})
	t.Run("a tool opens the file beside it", func(t *testing.T) {
		tool, err := store.Open(ctx, store.Config{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		tool.Close()
	})
	t.Run("its keys are remembered, and a revoked one is seen at once", func(t *testing.T) {
		reads := countKeyReads(t, st)
		tn := mustTenant(t, st, "acme")
		k := &store.APIKey{TenantID: tn.ID, Name: "k", Kind: "sk", Scopes: store.StringList{"chat"}, Hash: "hash-k"}
		if err := st.Tenant(k.TenantID).Keys().Create(ctx, k); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := st.KeyAuth().ByHash(ctx, k.Hash); err != nil {
				t.Fatal(err)
			}
		}
		if n := reads.Load(); n != 1 {
			t.Fatalf("three reads of a key took %d statements, want 1", n)
		}
		if _, err := st.Tenant(tn.ID).Keys().Revoke(ctx, k.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		if got, err := st.KeyAuth().ByHash(ctx, k.Hash); err != nil || got.RevokedAt == nil {
			t.Fatalf("after revoking, the key reads %+v, %v", got, err)
		}
	})
	t.Run("once it is closed, a server opens the file", func(t *testing.T) {
		st.Close()
		next, err := server()
		if err != nil {
			t.Fatal(err)
		}
		next.Close()
	})
}
