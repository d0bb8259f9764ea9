package store

import (
	"context"
	"database/sql"
	"sync"
)

// statements keeps SQLite's hand-written statements (sql.go) prepared.
// SQLite parses a statement's SQL each time it is prepared, and without
// this every statement of every turn was prepared afresh: a tenth of the
// server's CPU per turn. PostgreSQL needs none of it: pgx keeps a
// statement cache per connection.
//
// A statement is prepared on the pool the first time it runs outside a
// transaction. Inside one it cannot be: SQLite's pool has one connection
// and the transaction holds it. So a statement first seen in a
// transaction runs unprepared once, and is prepared as the transaction
// ends; later transactions use it on their connection (sql.Tx.StmtContext).
type statements struct {
	db *sql.DB

	mu       sync.Mutex
	prepared map[string]*sql.Stmt
	wanted   map[string]bool // seen in a transaction, not prepared yet
}

// maxPrepared bounds the statements kept: every fixed statement fits,
// while a statement whose text varies (an IN list of any length) cannot
// grow the set without end; past the bound statements run unprepared.
const maxPrepared = 256

func newStatements(db *sql.DB) *statements {
	return &statements{db: db, prepared: map[string]*sql.Stmt{}, wanted: map[string]bool{}}
}

// forPool returns query prepared, or nil to run it unprepared. pool is
// the Store's pool: the database, or a transaction on its connection.
func (c *statements) forPool(ctx context.Context, pool any, query string) *sql.Stmt {
	c.mu.Lock()
	st, full := c.prepared[query], len(c.prepared) >= maxPrepared
	tx, inTx := pool.(*sql.Tx)
	if st == nil && inTx && !full {
		c.wanted[query] = true
	}
	c.mu.Unlock()
	switch {
	case st != nil && inTx:
		return tx.StmtContext(ctx, st)
	case st != nil:
		return st
	case inTx || full:
		return nil
	}
	return c.prepare(ctx, query)
}

// prepare prepares query on the pool and keeps it, unless another
// statement took the last place meanwhile. It holds no lock while
// preparing: that waits for the connection, which a transaction asking
// for its statements may hold. A statement that does not prepare runs
// unprepared, to report its error where it ran.
func (c *statements) prepare(ctx context.Context, query string) *sql.Stmt {
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.wanted, query)
	switch kept := c.prepared[query]; {
	case kept != nil:
		st.Close()
		return kept
	case len(c.prepared) >= maxPrepared:
		st.Close()
		return nil
	}
	c.prepared[query] = st
	return st
}

// prepareWanted prepares the statements transactions ran unprepared,
// once the transaction that ran them gave its connection back.
func (c *statements) prepareWanted(ctx context.Context) {
	c.mu.Lock()
	if len(c.wanted) == 0 {
		c.mu.Unlock()
		return
	}
	queries := make([]string, 0, len(c.wanted))
	for q := range c.wanted {
		queries = append(queries, q)
	}
	clear(c.wanted)
	c.mu.Unlock()
	for _, q := range queries {
		c.prepare(context.WithoutCancel(ctx), q)
	}
}

func (c *statements) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.prepared {
		st.Close()
		delete(c.prepared, q)
	}
}
