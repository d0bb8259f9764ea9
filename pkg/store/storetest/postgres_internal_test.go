package storetest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestSchemasOfADeadProcessAreDroppedAndALiveOnesKept: a test process
// that died (a timeout, ^C) left its schemas; the next one drops them,
// and leaves those of a process still running, which holds its lock.
func TestSchemasOfADeadProcessAreDroppedAndALiveOnesKept(t *testing.T) {
	u := os.Getenv(EnvDatabaseURL)
	if u == "" {
		t.Skip(EnvDatabaseURL + " is not set")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	live, err := pgx.Connect(ctx, u) // a running process's admin connection
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close(ctx)
	if _, err := live.Exec(ctx, `SELECT pg_advisory_lock($1, hashtext('aliveaaaaaaa'))`, ownerLockClass); err != nil {
		t.Fatal(err)
	}
	schemas := []string{schemaPrefix + "deadbbbbbbbb", schemaPrefix + "deadbbbbbbbb_1", schemaPrefix + "aliveaaaaaaa_3"}
	for _, s := range schemas {
		if _, err := conn.Exec(ctx, `CREATE SCHEMA `+quote(s)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+quote(s)+` CASCADE`) })
	}
	admin, err := pgx.Connect(ctx, u) // the next process's, which newDatabase opens
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if err := (&database{admin: admin}).dropAbandoned(ctx); err != nil {
		t.Fatal(err)
	}
	exists := func(s string) bool {
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, s).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for _, s := range schemas[:2] {
		if exists(s) {
			t.Errorf("the dead process's schema %s is still there", s)
		}
	}
	if !exists(schemas[2]) {
		t.Errorf("the running process's schema %s was dropped", schemas[2])
	}
}

// TestAStoresConnectionsCommitWithoutWaitingForTheDisk: every connection
// of a test schema runs with synchronous_commit off (urlOf), the
// store's pooled ones included, and sees its own schema first.
func TestAStoresConnectionsCommitWithoutWaitingForTheDisk(t *testing.T) {
	u := os.Getenv(EnvDatabaseURL)
	if u == "" {
		t.Skip(EnvDatabaseURL + " is not set")
	}
	st := OpenPostgres(t, u)
	var commit, path string
	if err := st.DB().Raw("SELECT current_setting('synchronous_commit'), current_setting('search_path')").Row().Scan(&commit, &path); err != nil {
		t.Fatal(err)
	}
	if commit != "off" || path == "" || path == `"$user", public` {
		t.Fatalf("synchronous_commit %q, search_path %q; want off and the test's schema", commit, path)
	}
}
