package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/parleyhq/parley/pkg/store/storetest"
)

func TestEachPostgreSQLRunGetsASchemaItDropsAfterwards(t *testing.T) {
	databaseURL := os.Getenv(storetest.EnvDatabaseURL)
	if databaseURL == "" {
		t.Skip(storetest.EnvDatabaseURL + " not set")
	}
	ctx := context.Background()
	schemaURL, drop, err := freshSchema(ctx, databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drop() }) // when the test fails before its own drop
	conn, err := pgx.Connect(ctx, schemaURL)
	if err != nil {
		t.Fatal(err)
	}
	var schema string
	if err := conn.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if !strings.HasPrefix(schema, "parleyload_") {
		t.Fatalf("the run's URL works in schema %q; want a parleyload_ schema of its own", schema)
	}
	if err := drop(); err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var left int
	if err := admin.QueryRow(ctx, `SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1`, schema).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Fatalf("schema %s is still there after the run", schema)
	}
}
