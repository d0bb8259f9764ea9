package store

import (
	"context"
	"fmt"
	"testing"
)

// On SQLite a hand-written statement is parsed once per process, not once
// per use: the lease and the save run inside transactions, whose one
// connection cannot prepare on the pool, so they are prepared as the
// first transaction that ran them ends, and used prepared from then on.
func TestSQLiteStatementsArePreparedOnceAndServeLaterTransactions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.db.Exec(`CREATE TABLE notes (tenant_id TEXT, n INTEGER)`).Error; err != nil {
		t.Fatal(err)
	}
	const insert = `INSERT INTO notes (tenant_id, n) VALUES ($1, $2)`
	const count = `SELECT count(*) FROM notes WHERE tenant_id = $1`
	for i := range 3 {
		err := s.Tx(ctx, func(tx *Store) error {
			if _, err := tx.exec(ctx, insert, "ten_1", i); err != nil {
				return err
			}
			n, err := tx.int64s(ctx, count, "ten_1")
			if err == nil && n[0] != int64(i+1) {
				err = fmt.Errorf("%d notes after %d inserts", n[0], i+1)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if s.stmts == nil || s.stmts.prepared[insert] == nil || s.stmts.prepared[count] == nil {
			t.Fatalf("after transaction %d the statements it ran are not kept prepared", i+1)
		}
	}
	if n, err := s.int64s(ctx, count, "ten_1"); err != nil || n[0] != 3 {
		t.Fatalf("outside a transaction the prepared count reads %v, %v", n, err)
	}
}
