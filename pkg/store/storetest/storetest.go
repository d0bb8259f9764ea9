package storetest

import (
	"context"
	"os"
	"testing"

	"github.com/parleyhq/parley/pkg/store"
)

// EnvDatabaseURL names the variable that points tests at a PostgreSQL
// server, e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const EnvDatabaseURL = "PARLEY_TEST_DATABASE_URL"

// Backend is one database a suite runs on.
type Backend struct {
	Name  string
	Store *store.Store
}

// Open returns a migrated store per configured backend: SQLite, plus
// PostgreSQL when EnvDatabaseURL is set. Each is private to t and removed
// when t ends.
func Open(t testing.TB) []Backend {
	t.Helper()
	backends := []Backend{{Name: store.DialectSQLite, Store: OpenSQLite(t)}}
	if u := os.Getenv(EnvDatabaseURL); u != "" {
		backends = append(backends, Backend{Name: store.DialectPostgres, Store: OpenPostgres(t, u)})
	}
	return backends
}

// ForEach runs fn as a subtest named after each backend.
func ForEach(t *testing.T, fn func(t *testing.T, st *store.Store)) {
	t.Helper()
	for _, b := range Open(t) {
		t.Run(b.Name, func(t *testing.T) { fn(t, b.Store) })
	}
}

// OpenSQLite returns a migrated SQLite store in t's temporary directory.
func OpenSQLite(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{DataDir: SQLiteDataDir(t)})
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// OpenPostgres returns a migrated store in a new schema of the database at
// databaseURL; the schema is dropped when t ends, so tests never see each
// other's rows and leave nothing behind.
func OpenPostgres(t testing.TB, databaseURL string) *store.Store {
	t.Helper()
	st, _ := OpenPostgresServer(t, databaseURL)
	return st
}

// OpenPostgresServer returns the migrated store of a new schema and the
// schema's URL, to open more stores on, for instance as a server process
// would (store.Config.Server).
func OpenPostgresServer(t testing.TB, databaseURL string) (*store.Store, string) {
	t.Helper()
	u := PostgresSchema(t, databaseURL)
	st, err := store.Open(context.Background(), store.Config{DatabaseURL: u})
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st, u
}

// OpenPostgresTwice returns two stores on one new schema, as two server
// processes sharing a database have: rows are shared, and what a store
// keeps in memory is its own.
func OpenPostgresTwice(t testing.TB, databaseURL string) (*store.Store, *store.Store) {
	t.Helper()
	st, u := OpenPostgresServer(t, databaseURL)
	other, err := store.Open(context.Background(), store.Config{DatabaseURL: u})
	if err != nil {
		t.Fatalf("open postgres again: %v", err)
	}
	t.Cleanup(func() { other.Close() })
	return st, other
}
