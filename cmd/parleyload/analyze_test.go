package main

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/parleyhq/parley/pkg/store/storetest"
)

// TestAnalyzeLeavesTheServersTablesWithStatistics: a run on a new
// database is measured with the planner statistics a database in
// service has, and analyze touches only the servers' own schema.
func TestAnalyzeLeavesTheServersTablesWithStatistics(t *testing.T) {
	t.Parallel()
	url := os.Getenv("PARLEY_TEST_DATABASE_URL")
	if url == "" {
		t.Skip("set PARLEY_TEST_DATABASE_URL: statistics are PostgreSQL's")
	}
	ctx := context.Background()
	servers, other := storetest.PostgresSchema(t, url), storetest.PostgresSchema(t, url)
	analysed := func(databaseURL string) bool {
		t.Helper()
		conn, err := pgx.Connect(ctx, databaseURL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var ok bool // reltuples is -1 until the table is first analysed
		if err := conn.QueryRow(ctx, `SELECT reltuples >= 0 FROM pg_class WHERE oid = 'dialogs'::regclass`).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if analysed(servers) {
		t.Fatal("a new schema's dialogs were analysed already")
	}
	if err := analyze(ctx, servers); err != nil {
		t.Fatal(err)
	}
	if !analysed(servers) {
		t.Error("dialogs has no statistics after analyze")
	}
	if analysed(other) {
		t.Error("analyze reached another schema of the database")
	}
}
