package storetest

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// PostgreSQL has no statement that copies a schema, and a database made
// from a template costs more than the migrations it saves (every copy
// writes the whole catalog, some 9 MB, to the log). So the template schema
// is copied by statements read from its catalog once: each table created
// LIKE the template's, its rows copied, then its keys, indexes and foreign
// keys added under their own names. sameSchema checks the first copy
// against the template, so a migration that adds an object of a kind this
// leaves out (a sequence, a function, a trigger) fails the tests here
// instead of quietly giving them a different schema.

// cloneScript returns the statements that copy the template schema into
// the schema first in search_path.
func cloneScript(ctx context.Context, conn *pgx.Conn, template string) (string, error) {
	var script strings.Builder
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		// Names in the definitions below come unqualified, as the copy's
		// search_path wants them.
		if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+quote(template)); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT relname FROM pg_class
WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r' ORDER BY relname`)
		if err != nil {
			return err
		}
		tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, table := range tables {
			from := quote(template) + "." + quote(table)
			fmt.Fprintf(&script, "CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED INCLUDING IDENTITY INCLUDING STORAGE);\n",
				quote(table), from)
			fmt.Fprintf(&script, "INSERT INTO %s SELECT * FROM %s;\n", quote(table), from)
		}
		// Primary keys and unique constraints before the foreign keys that
		// reference them; indexes of their own between.
		rows, err = tx.Query(ctx, `
SELECT format('ALTER TABLE %I ADD CONSTRAINT %I %s;', cl.relname, con.conname, pg_get_constraintdef(con.oid, true))
FROM pg_constraint con JOIN pg_class cl ON cl.oid = con.conrelid
WHERE con.connamespace = current_schema()::regnamespace AND con.contype IN ('p', 'u', 'x')
UNION ALL
SELECT * FROM (SELECT pg_get_indexdef(i.indexrelid, 0, true) || ';'
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
  WHERE c.relnamespace = current_schema()::regnamespace AND NOT EXISTS (
    SELECT 1 FROM pg_constraint con WHERE con.conindid = i.indexrelid AND con.contype IN ('p', 'u', 'x'))
  ORDER BY 1) idx
UNION ALL
SELECT * FROM (SELECT format('ALTER TABLE %I ADD CONSTRAINT %I %s;', cl.relname, con.conname, pg_get_constraintdef(con.oid, true))
  FROM pg_constraint con JOIN pg_class cl ON cl.oid = con.conrelid
  WHERE con.connamespace = current_schema()::regnamespace AND con.contype = 'f' ORDER BY 1) fks`)
		if err != nil {
			return err
		}
		stmts, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, s := range stmts {
			script.WriteString(s + "\n")
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("storetest: read the template schema %s: %w", template, err)
	}
	return script.String(), nil
}

// sameSchema compares two schemas object by object: relations with their
// columns, constraints, indexes, functions, types and triggers.
func sameSchema(ctx context.Context, conn *pgx.Conn, template, copied string) error {
	want, err := describeSchema(ctx, conn, template)
	if err != nil {
		return err
	}
	got, err := describeSchema(ctx, conn, copied)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("storetest: the copy of the migrated template schema differs from it; "+
			"teach cloneScript the new kind of object.\ntemplate:\n%s\ncopy:\n%s", want, got)
	}
	return nil
}

func describeSchema(ctx context.Context, conn *pgx.Conn, schema string) (string, error) {
	var desc string
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+quote(schema)); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `
WITH ns AS (SELECT current_schema()::regnamespace AS oid)
SELECT coalesce(string_agg(line, E'\n' ORDER BY line), '') FROM (
  SELECT format('relation %s %s (%s)', c.relkind, c.relname, (
      SELECT string_agg(format('%s %s%s%s', a.attname, format_type(a.atttypid, a.atttypmod),
          CASE WHEN a.attnotnull THEN ' not null' ELSE '' END,
          coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid, true), '')), ', ' ORDER BY a.attnum)
      FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped)) AS line
    FROM pg_class c WHERE c.relnamespace = (SELECT oid FROM ns)
  UNION ALL SELECT format('constraint %s on %s: %s', con.conname, con.conrelid::regclass, pg_get_constraintdef(con.oid, true))
    FROM pg_constraint con WHERE con.connamespace = (SELECT oid FROM ns)
  UNION ALL SELECT 'index ' || pg_get_indexdef(i.indexrelid, 0, true)
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relnamespace = (SELECT oid FROM ns)
  UNION ALL SELECT 'function ' || p.oid::regprocedure::text FROM pg_proc p WHERE p.pronamespace = (SELECT oid FROM ns)
  UNION ALL SELECT 'type ' || t.typname FROM pg_type t WHERE t.typnamespace = (SELECT oid FROM ns) AND t.typrelid = 0
  UNION ALL SELECT format('trigger %s on %s', t.tgname, t.tgrelid::regclass)
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = (SELECT oid FROM ns) AND NOT t.tgisinternal
) lines`).Scan(&desc)
	})
	return desc, err
}
