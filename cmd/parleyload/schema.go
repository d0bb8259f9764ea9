package main

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
)

// freshSchema creates an empty PostgreSQL schema for one started server
// and returns the database URL that points the server at it (pgx sends
// search_path on every connection). drop removes the schema with all the
// tenants, dialogs and messages the run wrote, so a run neither finds the
// tables of the runs before it, grown by hundreds of thousands of rows,
// nor leaves its own in the database it was given.
func freshSchema(ctx context.Context, databaseURL string) (schemaURL string, drop func() error, err error) {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return "", nil, fmt.Errorf("-database-url: %w", err)
	}
	schema := "parleyload_" + randomToken()[:12]
	if err := execOnce(ctx, databaseURL, `CREATE SCHEMA "`+schema+`"`); err != nil {
		return "", nil, fmt.Errorf("create schema %s: %w", schema, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	drop = func() error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := execOnce(ctx, databaseURL, `DROP SCHEMA "`+schema+`" CASCADE`); err != nil {
			return fmt.Errorf("drop schema %s: %w", schema, err)
		}
		return nil
	}
	return u.String(), drop, nil
}

// execOnce runs one statement on a connection of its own.
func execOnce(ctx context.Context, databaseURL, sql string) error {
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}
