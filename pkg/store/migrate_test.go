package store_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

func TestMigrateFromEmpty(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	open := func() *store.Store {
		st, err := store.Open(ctx, store.Config{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	first, second := open(), open()
	t.Run("an empty database is at version 0", func(t *testing.T) {
		if v, err := first.SchemaVersion(ctx); err != nil || v != 0 {
			t.Fatalf("version %d, %v", v, err)
		}
	})
	t.Run("two processes migrating at once both succeed", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, st := range []*store.Store{first, second} {
			wg.Go(func() { errs[i] = st.Migrate(ctx) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		v1, _ := first.SchemaVersion(ctx)
		v2, _ := second.SchemaVersion(ctx)
		if v1 < 1 || v1 != v2 {
			t.Fatalf("versions %d and %d", v1, v2)
		}
	})
	t.Run("the data survives reopening", func(t *testing.T) {
		if err := first.Tenants().Create(ctx, &store.Tenant{Slug: "acme", Name: "Acme"}); err != nil {
			t.Fatal(err)
		}
		if _, err := open().Tenants().Get(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestAServerStartingOnAnUpToDateDatabaseWaitsForNoMigrationLock: a
// server restarting after a crash finds its schema current. It must not
// queue behind the lock that servers migrating other schemas of the
// database hold (one lock per database), or the dead server's dialogs
// wait for their migrations.
func TestAServerStartingOnAnUpToDateDatabaseWaitsForNoMigrationLock(t *testing.T) {
	t.Parallel()
	u := os.Getenv(storetest.EnvDatabaseURL)
	if u == "" {
		t.Skip(storetest.EnvDatabaseURL + " is not set: the migration lock is PostgreSQL's")
	}
	ctx := context.Background()
	_, schemaURL := storetest.OpenPostgresServer(t, u)
	holder, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	// The lock applyOnce takes, held as by a server migrating meanwhile.
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_lock(7234001)`); err != nil {
		t.Fatal(err)
	}
	defer holder.Exec(ctx, `SELECT pg_advisory_unlock(7234001)`)
	st, err := store.Open(ctx, store.Config{DatabaseURL: schemaURL})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	bounded, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := st.Migrate(bounded); err != nil {
		t.Fatalf("migrating a current schema waited for the lock: %v", err)
	}
}

func TestOpenRefusesAForeignDatabaseURL(t *testing.T) {
	t.Parallel()
	_, err := store.Open(context.Background(), store.Config{DatabaseURL: "mysql://root:hunter2@db/parley"})
	if err == nil {
		t.Fatal("a mysql URL was accepted")
	}
}

func TestOpenErrorsDoNotRevealTheDatabasePassword(t *testing.T) {
	t.Parallel()
	_, err := store.Open(context.Background(), store.Config{DatabaseURL: "postgres://parley:hunter2@127.0.0.1:1/parley?sslmode=disable&connect_timeout=2"})
	if err == nil {
		t.Fatal("connected to a closed port")
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error reveals the password: %v", err)
	}
}
