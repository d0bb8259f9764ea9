package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"gorm.io/gorm"
)

// The statements every turn runs (the lease, the save, the history) are
// plain SQL with $n placeholders, sent through database/sql as written:
// PostgreSQL numbers its parameters so, and SQLite binds $n to the n-th
// argument too. gorm keeps the rest: CRUD and migrations.

// pool is the connection pool under gorm, or the transaction when s is
// a transaction's Store.
func (s *Store) pool() gorm.ConnPool { return s.db.Statement.ConnPool }

// prepared is query prepared on SQLite (statements.go), or nil to run it
// as it is: always on PostgreSQL, whose driver keeps its own.
func (s *Store) prepared(ctx context.Context, query string) *sql.Stmt {
	if s.stmts == nil {
		return nil
	}
	return s.stmts.forPool(ctx, s.pool(), query)
}

// exec runs one statement that returns no rows and says how many rows it
// changed. Like gorm's own statements it goes to the logger (slow ones
// and failures), and its errors are translated as gorm translates them.
func (s *Store) exec(ctx context.Context, query string, args ...any) (int64, error) {
	begin := time.Now()
	var res sql.Result
	var err error
	if st := s.prepared(ctx, query); st != nil {
		res, err = st.ExecContext(ctx, args...)
	} else {
		res, err = s.pool().ExecContext(ctx, query, args...)
	}
	var n int64
	if err == nil {
		n, err = res.RowsAffected()
	}
	s.trace(ctx, begin, query, n, err)
	return n, s.translate(err)
}

// query runs one statement that returns rows.
func (s *Store) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	begin := time.Now()
	var rows *sql.Rows
	var err error
	if st := s.prepared(ctx, query); st != nil {
		rows, err = st.QueryContext(ctx, args...)
	} else {
		rows, err = s.pool().QueryContext(ctx, query, args...)
	}
	s.trace(ctx, begin, query, -1, err)
	return rows, s.translate(err)
}

// int64s runs a statement that returns one integer column (a seq, a
// count) and reads all of its rows.
func (s *Store) int64s(ctx context.Context, query string, args ...any) ([]int64, error) {
	return column[int64](ctx, s, query, args...)
}

// strings runs a statement that returns one text column.
func (s *Store) strings(ctx context.Context, query string, args ...any) ([]string, error) {
	return column[string](ctx, s, query, args...)
}

func column[T any](ctx context.Context, s *Store, query string, args ...any) ([]T, error) {
	rows, err := s.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, s.translate(rows.Err())
}

func (s *Store) trace(ctx context.Context, begin time.Time, query string, rows int64, err error) {
	s.db.Logger.Trace(ctx, begin, func() (string, int64) { return query, rows }, err)
}

// translate turns a driver's constraint errors into gorm's, which wrap
// turns into the package's sentinels.
func (s *Store) translate(err error) error {
	if err == nil || errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if t, ok := s.db.Dialector.(gorm.ErrorTranslator); ok {
		return t.Translate(err)
	}
	return err
}
