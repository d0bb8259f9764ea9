package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/libtnb/sqlite"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Config says which database to open.
type Config struct {
	// DatabaseURL selects PostgreSQL (postgres:// or postgresql://). Empty
	// means the embedded SQLite database in DataDir.
	DatabaseURL string
	// DataDir holds parley.db when DatabaseURL is empty; it is created if
	// missing.
	DataDir string
	// Logger receives slow-query warnings and driver errors. Nil discards.
	Logger *slog.Logger
	// Server opens the store for `parley serve`. On SQLite it holds the
	// data directory's server lock until Close, so no second server shares
	// the file; then every revocation of an API key is this process's own,
	// and the store remembers keys (see KeyAuth.ByHash), and what a dead
	// server left is this server's to settle (Abandoned.Settle). PostgreSQL,
	// shared by design, hears other processes' revocations instead, and
	// the store tells the others it is alive (Instance).
	Server bool
}

// Store is the database. It is safe for concurrent use.
type Store struct {
	db      *gorm.DB
	dialect string
	where   string
	// checkpoints runs SQLite's WAL checkpoints off the request path; nil
	// on PostgreSQL and in a transaction's Store.
	checkpoints *checkpointer
	// keys remembers authenticated API keys while every revocation is
	// heard: on PostgreSQL through listener (nil in a transaction's Store),
	// on SQLite by holding serverLock. Nil remembers nothing.
	keys       *keyCache
	listener   *keyListener
	serverLock io.Closer
	// instance is this server's liveness on PostgreSQL (Config.Server);
	// nil elsewhere and in a transaction's Store.
	instance *instanceLock
	// stmts keeps SQLite's hand-written statements prepared; nil on
	// PostgreSQL. A transaction's Store shares its database's.
	stmts *statements
	// inTx says the Store is a transaction's.
	inTx bool
	// words caches the statistics the keyword search weighs words by, on
	// PostgreSQL; a transaction's Store shares its database's.
	words *wordStats
	// ftsWords caches the word counts SQLite's keyword search leaves
	// common words out by; shared like words.
	ftsWords *ftsWordCounts
	// claimOwner names this server process in Idempotency-Key claims: its
	// instance on PostgreSQL, a run id on SQLite; "" when not a Server.
	claimOwner string
}

// Dialect names.
const (
	DialectSQLite   = "sqlite"
	DialectPostgres = "postgres"
)

// Open connects to the database described by cfg. It does not migrate; call
// Migrate before use.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	gcfg := &gorm.Config{
		TranslateError: true,
		Logger:         newGormLogger(log),
		NowFunc:        func() time.Time { return time.Now().UTC() },
	}
	if cfg.DatabaseURL != "" {
		return openPostgres(ctx, cfg, gcfg, log)
	}
	return openSQLite(ctx, cfg, gcfg, log)
}

// poolSize is how many connections to PostgreSQL a server holds at most.
const poolSize = 20

func openPostgres(ctx context.Context, cfg Config, gcfg *gorm.Config, log *slog.Logger) (*Store, error) {
	dsn := cfg.DatabaseURL
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return nil, errors.New("store: database URL must start with postgres:// or postgresql://")
	}
	listenCfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open postgres at %s: %w", redactURL(dsn), err)
	}
	// Every pooled connection's backend probes its client as the instance
	// lock's does: a server whose host vanished mid-transaction would
	// otherwise hold that transaction's row locks (a dialog's, its
	// lease's) for as long as TCP's defaults wait, hours.
	probe := stdlib.OptionAfterConnect(func(ctx context.Context, conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, vanishedClientSQL())
		return err
	})
	db, err := gorm.Open(postgres.New(postgres.Config{DSN: dsn,
		OptionOpenDB: []stdlib.OptionOpenDB{stdlib.OptionShouldPing(pingIdle), probe}}), gcfg)
	if err != nil {
		return nil, fmt.Errorf("store: open postgres at %s: %w", redactURL(dsn), err)
	}
	if sqlDB, err := db.DB(); err == nil {
		// Bounded, so many replicas stay under the server's max_connections.
		// Every open connection may stay idle: with fewer, a server busy
		// with between that many and 20 statements at once closed a
		// connection whenever a burst ended and opened a new one (a
		// backend and a re-prepare) for the next (docs/performance.md,
		// issue 29). Connections idle for minutes are still closed, so a
		// quiet server holds few and a failover is picked up.
		sqlDB.SetMaxOpenConns(poolSize)
		sqlDB.SetMaxIdleConns(poolSize)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
		watchPool(gcfg, sqlDB)
	}
	keys := newKeyCache()
	s := &Store{db: db, dialect: DialectPostgres, where: redactURL(dsn),
		keys: keys, listener: newKeyListener(listenCfg, keys, log), words: &wordStats{}}
	if err := s.Ping(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("store: connect to postgres at %s: %w", s.where, err)
	}
	if cfg.Server {
		if s.instance, err = holdInstanceLock(ctx, listenCfg.Copy(), log); err != nil {
			s.Close()
			return nil, err
		}
		s.claimOwner = s.instance.id
	}
	return s, nil
}

// pingIdleAfter is how long a pooled connection may sit idle before it is
// pinged ahead of its next statement. The driver's default, a second,
// pings on most bursts of a paced load: the pool's least used connections
// idle longer than that between bursts, so a burst's turns paid a round
// trip more than the others, right where the tail is. Connections go stale
// after minutes (a restart, a failover, a firewall's idle timeout), not
// seconds; a restart fails the statements of connections used just before
// it either way.
const pingIdleAfter = 30 * time.Second

func pingIdle(_ context.Context, p stdlib.ShouldPingParams) bool {
	return p.IdleDuration > pingIdleAfter
}

func openSQLite(ctx context.Context, cfg Config, gcfg *gorm.Config, log *slog.Logger) (*Store, error) {
	dir := cmp.Or(cfg.DataDir, ".")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: create data dir: %w", err)
	}
	var lock io.Closer
	if cfg.Server {
		var err error
		if lock, err = lockServer(dir); err != nil {
			return nil, err
		}
	}
	s, err := openSQLiteFile(ctx, dir, gcfg, log)
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		return nil, err
	}
	if lock != nil {
		s.serverLock, s.keys, s.claimOwner = lock, newKeyCache(), NewID("srv")
		s.keys.setLive(true)
	}
	return s, nil
}

func openSQLiteFile(ctx context.Context, dir string, gcfg *gorm.Config, log *slog.Logger) (*Store, error) {
	path := filepath.Join(dir, "parley.db")
	// WAL lets readers run beside the writer; busy_timeout waits for a lock
	// instead of failing; _txlock=immediate takes the write lock at BEGIN so
	// two transactions never deadlock upgrading read locks.
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)" +
		"&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	checkpoints, err := startCheckpointer(dsn, log)
	if err != nil {
		return nil, fmt.Errorf("store: open sqlite %s: %w", path, err)
	}
	// The checkpointer copies the log; a commit does only past the
	// backstop.
	// _texttotime=0: a computed text column (an expression, a substring of
	// a message) stays text even when it reads like a date, as the store's
	// queries expect; the dialector turns that conversion on by default.
	dsn += fmt.Sprintf("&_pragma=wal_autocheckpoint(%d)&_txlock=immediate&_texttotime=0", backstopPages)
	db, err := gorm.Open(sqlite.Open(dsn), gcfg)
	if err != nil {
		checkpoints.close()
		return nil, fmt.Errorf("store: open sqlite %s: %w", path, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		checkpoints.close()
		return nil, fmt.Errorf("store: open sqlite %s: %w", path, err)
	}
	// SQLite has one writer at a time; one connection serialises access in
	// the pool instead of in busy retries, and keeps the per-connection
	// pragmas above in force.
	sqlDB.SetMaxOpenConns(1)
	sqlDB.SetConnMaxLifetime(0)
	watchPool(gcfg, sqlDB)
	s := &Store{db: db, dialect: DialectSQLite, where: path, checkpoints: checkpoints, stmts: newStatements(sqlDB), ftsWords: &ftsWordCounts{}}
	if err := s.Ping(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("store: open sqlite %s: %w", path, err)
	}
	return s, nil
}

// Dialect is DialectSQLite or DialectPostgres.
func (s *Store) Dialect() string { return s.dialect }

// Location says where the data lives, for start-up messages: the SQLite
// file, or the PostgreSQL URL without its password.
func (s *Store) Location() string { return s.where }

// Ping checks that the database answers, for readiness probes.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	return nil
}

// Instance names this server process in the leases it takes, "" when
// the store does not tell other servers it is alive (SQLite, or not a
// Server). Lease owners are the instance, a slash and the run: a lease
// whose owner names a dead instance is free (see instance_postgres.go).
func (s *Store) Instance() string {
	if s.instance == nil {
		return ""
	}
	return s.instance.id
}

// Close releases the connections.
func (s *Store) Close() error {
	if s.instance != nil {
		s.instance.close()
	}
	if s.checkpoints != nil {
		s.checkpoints.close()
	}
	if s.listener != nil {
		s.listener.close()
	}
	if s.serverLock != nil {
		defer s.serverLock.Close() // after the connections: the file is free once unlocked
	}
	if s.stmts != nil {
		s.stmts.close()
	}
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// DB is the underlying gorm handle, for tests that must inspect raw rows.
// Application code uses the typed methods, which enforce tenant scoping.
func (s *Store) DB() *gorm.DB { return s.db }

// Tx runs fn in one transaction: all of its writes happen or none do.
func (s *Store) Tx(ctx context.Context, fn func(tx *Store) error) error {
	err := s.db.WithContext(ctx).Transaction(func(db *gorm.DB) error {
		return fn(&Store{db: db, dialect: s.dialect, where: s.where, keys: s.keys, stmts: s.stmts, words: s.words, ftsWords: s.ftsWords, inTx: true})
	})
	if s.stmts != nil && !s.inTx {
		s.stmts.prepareWanted(ctx)
	}
	return err
}

// q starts a query bound to ctx.
func (s *Store) q(ctx context.Context) *gorm.DB { return s.db.WithContext(ctx) }

// redactURL drops the password from a database URL so it can be logged.
func redactURL(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres (unparsable URL)"
	}
	return u.Redacted()
}

// newGormLogger sends gorm's errors and slow statements to slog, never
// the SQL arguments, which may hold hashes or ciphertext.
func newGormLogger(log *slog.Logger) quietLogger {
	return quietLogger{Interface: logger.NewSlogLogger(log, logger.Config{
		LogLevel:                  logger.Warn,
		IgnoreRecordNotFoundError: true,
		ParameterizedQueries:      true,
	}), log: log, pool: &poolRef{}}
}

// slowQuery is the duration past which a statement is logged as slow.
const slowQuery = 500 * time.Millisecond

// quietLogger keeps expected outcomes out of the error log: a unique-key
// conflict is an answer (409, "slug taken"), not a failure. It also turns
// message arguments into text, because some driver errors hold values the
// JSON log handler cannot encode, and says how busy the connection pool
// was when a statement is slow.
type quietLogger struct {
	logger.Interface
	log  *slog.Logger
	pool *poolRef
}

// poolRef is the store's connection pool once it is open.
type poolRef struct{ db atomic.Pointer[sql.DB] }

// watchPool gives gcfg's logger the pool its slow statements waited on.
func watchPool(gcfg *gorm.Config, db *sql.DB) {
	if q, ok := gcfg.Logger.(quietLogger); ok {
		q.pool.db.Store(db)
	}
}

func (q quietLogger) LogMode(l logger.LogLevel) logger.Interface {
	q.Interface = q.Interface.LogMode(l)
	return q
}

// Trace hands on only what will be logged: gorm's own logger renders every
// statement's SQL before deciding whether to log it.
func (q quietLogger) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		err = nil
	}
	switch took := time.Since(begin); {
	case err != nil:
		q.Interface.Trace(ctx, begin, fc, err)
	case took >= slowQuery:
		q.logSlow(ctx, took, fc)
	}
}

// logSlow warns of a slow statement with the pool's state as it ended.
// Its time includes the wait for a pooled connection: with every
// connection in use, that wait, not the database, is the likelier cause,
// and the answer is fewer concurrent turns per server or more servers,
// not an index (docs/deploy.md).
func (q quietLogger) logSlow(ctx context.Context, took time.Duration, fc func() (string, int64)) {
	statement, rows := fc()
	attrs := []any{"duration_ms", took.Milliseconds(), "sql", statement, "rows", rows}
	if db := q.pool.db.Load(); db != nil {
		st := db.Stats()
		attrs = append(attrs, "pool_in_use", st.InUse, "pool_size", st.MaxOpenConnections)
	}
	q.log.WarnContext(ctx, "slow SQL statement, its time including any wait for a pooled connection", attrs...)
}

// ParamsFilter keeps a statement's arguments out of its log line. gorm
// asks the logger itself, so wrapping gorm's own logger (which would say
// the same with ParameterizedQueries) must say it again.
func (quietLogger) ParamsFilter(_ context.Context, sql string, _ ...any) (string, []any) {
	return sql, nil
}

func (q quietLogger) Error(ctx context.Context, msg string, data ...any) {
	q.Interface.Error(ctx, msg, textOf(data)...)
}

func (q quietLogger) Warn(ctx context.Context, msg string, data ...any) {
	q.Interface.Warn(ctx, msg, textOf(data)...)
}

func textOf(data []any) []any {
	out := make([]any, len(data))
	for i, d := range data {
		out[i] = fmt.Sprint(d)
	}
	return out
}
