package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// analyze gathers PostgreSQL's planner statistics on the tables of the
// servers' database (its current schema), as autovacuum does within a
// minute of a new database's first writes. Until then the planner cannot
// tell that tenant_id matches nearly every dialog and id one, and the
// generic plans of a turn's statements find the dialog through an index
// on tenant_id alone, reading every dialog of the tenant three times a
// turn. Without this a run on a fresh database measures that first
// minute, at a cost that grows with the dialogs the run creates, and
// whether autovacuum came by during a level decided its throughput
// (docs/performance.md).
func analyze(ctx context.Context, databaseURL string) error {
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return fmt.Errorf("analyze the database: %w", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT format('ANALYZE %I.%I', schemaname, tablename) FROM pg_tables WHERE schemaname = current_schema()`)
	if err != nil {
		return fmt.Errorf("analyze the database: %w", err)
	}
	statements, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("analyze the database: %w", err)
	}
	for _, q := range statements {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("analyze the database: %w", err)
		}
	}
	return nil
}
