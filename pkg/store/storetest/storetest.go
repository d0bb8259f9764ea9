package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
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
	st, err := store.Open(context.Background(), store.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	migrate(t, st)
	return st
}

// OpenPostgres returns a migrated store in a new schema of the database at
// databaseURL; the schema is dropped when t ends, so tests never see each
// other's rows and leave nothing behind.
func OpenPostgres(t testing.TB, databaseURL string) *store.Store {
	st, _ := openPostgres(t, databaseURL)
	return st
}

// OpenPostgresServer returns the migrated store of a new schema and the
// schema's URL, to open more stores on, for instance as a server process
// would (store.Config.Server).
func OpenPostgresServer(t testing.TB, databaseURL string) (*store.Store, string) {
	t.Helper()
	return openPostgres(t, databaseURL)
}

// OpenPostgresTwice returns two stores on one new schema, as two server
// processes sharing a database have: rows are shared, and what a store
// keeps in memory is its own.
func OpenPostgresTwice(t testing.TB, databaseURL string) (*store.Store, *store.Store) {
	t.Helper()
	st, url := openPostgres(t, databaseURL)
	other, err := store.Open(context.Background(), store.Config{DatabaseURL: url})
	if err != nil {
		t.Fatalf("open postgres again: %v", err)
	}
	t.Cleanup(func() { other.Close() })
	return st, other
}

func openPostgres(t testing.TB, databaseURL string) (st *store.Store, schemaURL string) {
	t.Helper()
	ctx := context.Background()
	admin, err := store.Open(ctx, store.Config{DatabaseURL: databaseURL})
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	schema := "test_" + randomHex(t)
	if err := admin.DB().Exec(`CREATE SCHEMA "` + schema + `"`).Error; err != nil {
		admin.Close()
		t.Fatalf("create schema: %v", err)
	}
	schemaURL = withSearchPath(t, databaseURL, schema)
	st, err = store.Open(ctx, store.Config{DatabaseURL: schemaURL})
	if err != nil {
		t.Fatalf("open postgres schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		st.Close()
		if err := admin.DB().Exec(`DROP SCHEMA "` + schema + `" CASCADE`).Error; err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
		admin.Close()
	})
	migrate(t, st)
	return st, schemaURL
}

func migrate(t testing.TB, st *store.Store) {
	t.Helper()
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate %s: %v", st.Dialect(), err)
	}
}

// withSearchPath adds a search_path runtime parameter, which pgx sends on
// every new connection of the pool.
func withSearchPath(t testing.TB, databaseURL, schema string) string {
	t.Helper()
	u, err := url.Parse(databaseURL)
	if err != nil {
		t.Fatalf("parse %s: %v", EnvDatabaseURL, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func randomHex(t testing.TB) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
