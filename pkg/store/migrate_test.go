package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/parleyhq/parley/pkg/store"
)

func TestMigrateFromEmpty(t *testing.T) {
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
		if err := first.CreateTenant(ctx, &store.Tenant{Slug: "acme", Name: "Acme"}); err != nil {
			t.Fatal(err)
		}
		if _, err := open().GetTenant(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestOpenRefusesAForeignDatabaseURL(t *testing.T) {
	_, err := store.Open(context.Background(), store.Config{DatabaseURL: "mysql://root:hunter2@db/parley"})
	if err == nil {
		t.Fatal("a mysql URL was accepted")
	}
}

func TestOpenErrorsDoNotRevealTheDatabasePassword(t *testing.T) {
	_, err := store.Open(context.Background(), store.Config{DatabaseURL: "postgres://parley:hunter2@127.0.0.1:1/parley?sslmode=disable&connect_timeout=2"})
	if err == nil {
		t.Fatal("connected to a closed port")
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error reveals the password: %v", err)
	}
}
