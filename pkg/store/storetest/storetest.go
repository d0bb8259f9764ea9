package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
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

// EveryCell returns every non-null cell of every table of st as text,
// keyed by table, row number and column: for tests that a value is stored
// nowhere (a credential in the clear, an erased end user's words).
func EveryCell(t testing.TB, st *store.Store) map[string]string {
	t.Helper()
	db := st.DB()
	tables, err := db.Migrator().GetTables()
	if err != nil {
		t.Fatal(err)
	}
	cells := map[string]string{}
	for _, table := range tables {
		rows, err := db.Table(table).Rows()
		if err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		cols, _ := rows.Columns()
		for r := 0; rows.Next(); r++ {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("scan %s: %v", table, err)
			}
			for i, v := range vals {
				if v == nil {
					continue
				}
				text := fmt.Sprint(v)
				if b, ok := v.([]byte); ok {
					text = string(b)
				}
				cells[fmt.Sprintf("%s row %d column %s", table, r, cols[i])] = text
			}
		}
		rows.Close()
	}
	return cells
}
