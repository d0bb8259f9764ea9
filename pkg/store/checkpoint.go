package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/libtnb/sqlite"
)

// checkpointEvery is how often the checkpointer copies SQLite's
// write-ahead log into the database file.
const checkpointEvery = 500 * time.Millisecond

// backstopPages is the WAL size (in 4 KiB pages) at which SQLite still
// checkpoints inside a commit, should the checkpointer fall behind: ten
// times SQLite's default, so it bounds the log without being the rule.
const backstopPages = 10000

// checkpointer copies SQLite's write-ahead log into the database file on a
// connection of its own. Left to itself, SQLite does it inside the commit
// that makes the log cross its threshold: a stall of milliseconds (it
// syncs the file) for that request and for every request queued behind it
// on the store's one connection. A PASSIVE checkpoint runs beside readers
// and the writer, and waits for neither.
type checkpointer struct {
	db     *sql.DB
	log    *slog.Logger
	stop   chan struct{}
	done   chan struct{}
	closed sync.Once
}

// startCheckpointer opens its own connection to the database of dsn and
// checkpoints it every checkpointEvery until close.
func startCheckpointer(dsn string, log *slog.Logger) (*checkpointer, error) {
	db, err := sql.Open(sqlite.DriverName, dsn)
	if err != nil {
		return nil, fmt.Errorf("checkpointer: %w", err)
	}
	db.SetMaxOpenConns(1)
	c := &checkpointer{db: db, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c, nil
}

func (c *checkpointer) run() {
	defer close(c.done)
	tick := time.NewTicker(checkpointEvery)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
			if _, err := c.db.ExecContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
				c.log.Warn("store: sqlite checkpoint", "err", err)
			}
		}
	}
}

// close stops the checkpoints and closes the connection; closing again
// does nothing, as closing a store twice does nothing.
func (c *checkpointer) close() {
	c.closed.Do(func() {
		close(c.stop)
		<-c.done
		_ = c.db.Close()
	})
}
