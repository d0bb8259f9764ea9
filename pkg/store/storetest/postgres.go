package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/parleyhq/parley/pkg/store"
)

// A test process's schemas are named schemaPrefix+owner (its migrated
// template) and schemaPrefix+owner+"_"+n (each test's copy), owner being
// random per process. The process holds the advisory lock (ownerLockClass,
// owner) while it runs, so the schemas of a process that ended are
// recognised, and dropped, by the next one: its template, which nothing
// drops at the end of a test binary, and the copies of one that died (a
// test timeout, ^C).
const (
	schemaPrefix   = "parley_t"
	ownerLockClass = 7234002
)

// PostgresSchema creates a migrated, empty schema in the database at
// databaseURL, private to t and dropped when t ends, and returns a URL
// that uses it: for a store or a server (PARLEY_DATABASE_URL) to open.
func PostgresSchema(t testing.TB, databaseURL string) string {
	t.Helper()
	db, err := databaseFor(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	schema, err := db.copyTemplate()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.exec(`DROP SCHEMA ` + quote(schema) + ` CASCADE`); err != nil {
			t.Errorf("storetest: drop schema %s: %v", schema, err)
		}
	})
	return db.urlOf(schema)
}

// database is one PostgreSQL database, the template schema this process
// migrated in it, and the statements that copy the template.
type database struct {
	mu       sync.Mutex
	admin    *pgx.Conn // holds the owner lock; one statement at a time
	base     url.URL
	template string
	clone    string // copies the template into the current schema
	copies   int
	checked  bool // the first copy was compared with the template
}

var databases = struct {
	mu    sync.Mutex
	byURL map[string]*database
}{byURL: map[string]*database{}}

func databaseFor(databaseURL string) (*database, error) {
	databases.mu.Lock()
	defer databases.mu.Unlock()
	if db, ok := databases.byURL[databaseURL]; ok {
		return db, nil
	}
	db, err := newDatabase(databaseURL)
	if err != nil {
		return nil, err
	}
	databases.byURL[databaseURL] = db
	return db, nil
}

// newDatabase takes this process's owner lock, drops what dead processes
// left, and migrates the template schema. The admin connection stays open,
// and the lock held, until the process ends.
func newDatabase(databaseURL string) (db *database, err error) {
	ctx := context.Background()
	base, err := url.Parse(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("storetest: parse %s: %w", EnvDatabaseURL, err)
	}
	admin, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return nil, fmt.Errorf("storetest: connect to postgres: %w", err)
	}
	defer func() {
		if err != nil {
			admin.Close(ctx)
		}
	}()
	b := make([]byte, 6)
	rand.Read(b)
	owner := hex.EncodeToString(b)
	db = &database{admin: admin, base: *base, template: schemaPrefix + owner}
	if _, err := admin.Exec(ctx, `SELECT pg_advisory_lock($1, hashtext($2))`, ownerLockClass, owner); err != nil {
		return nil, fmt.Errorf("storetest: take the owner lock: %w", err)
	}
	if err := db.dropAbandoned(ctx); err != nil {
		return nil, err
	}
	if err := db.exec(`CREATE SCHEMA ` + quote(db.template)); err != nil {
		return nil, fmt.Errorf("storetest: create the template schema: %w", err)
	}
	st, err := store.Open(ctx, store.Config{DatabaseURL: db.urlOf(db.template)})
	if err != nil {
		return nil, fmt.Errorf("storetest: open the template schema: %w", err)
	}
	err = st.Migrate(ctx)
	st.Close()
	if err != nil {
		return nil, fmt.Errorf("storetest: migrate the template schema: %w", err)
	}
	if db.clone, err = cloneScript(ctx, admin, db.template); err != nil {
		return nil, err
	}
	return db, nil
}

// dropAbandoned drops the schemas of test processes that no longer hold
// their owner lock.
func (db *database) dropAbandoned(ctx context.Context) error {
	rows, err := db.admin.Query(ctx, `SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)`, schemaPrefix)
	if err != nil {
		return fmt.Errorf("storetest: list test schemas: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("storetest: list test schemas: %w", err)
	}
	byOwner := map[string][]string{}
	for _, name := range names {
		owner, _, _ := strings.Cut(strings.TrimPrefix(name, schemaPrefix), "_")
		byOwner[owner] = append(byOwner[owner], name)
	}
	for owner, names := range byOwner {
		var free bool
		if err := db.admin.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, hashtext($2))`, ownerLockClass, owner).Scan(&free); err != nil {
			return fmt.Errorf("storetest: check a test process's lock: %w", err)
		}
		if !free {
			continue // its process is running
		}
		for _, name := range names {
			if err := db.exec(`DROP SCHEMA IF EXISTS ` + quote(name) + ` CASCADE`); err != nil {
				return fmt.Errorf("storetest: drop abandoned schema %s: %w", name, err)
			}
		}
		if _, err := db.admin.Exec(ctx, `SELECT pg_advisory_unlock($1, hashtext($2))`, ownerLockClass, owner); err != nil {
			return fmt.Errorf("storetest: release a test process's lock: %w", err)
		}
	}
	return nil
}

// copyTemplate creates a new schema holding a copy of the template and
// returns its name. The first copy is compared with the template, so a
// migration that adds something the copy leaves out fails loudly.
func (db *database) copyTemplate() (string, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.copies++
	schema := fmt.Sprintf("%s_%d", db.template, db.copies)
	ctx := context.Background()
	script := `BEGIN; CREATE SCHEMA ` + quote(schema) + `; SET LOCAL search_path TO ` + quote(schema) + "; " + db.clone + " COMMIT;"
	if _, err := db.admin.Exec(ctx, script); err != nil {
		db.admin.Exec(ctx, `ROLLBACK`)
		return "", fmt.Errorf("storetest: copy the template schema: %w", err)
	}
	if !db.checked {
		if err := sameSchema(ctx, db.admin, db.template, schema); err != nil {
			return "", err
		}
		db.checked = true
	}
	return schema, nil
}

func (db *database) exec(sql string) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	_, err := db.admin.Exec(context.Background(), sql)
	return err
}

// urlOf adds runtime parameters, which pgx sends on every new connection
// of the pool: the schema's search_path, and synchronous_commit off. A
// throw-away schema needs no commit to wait for its write-ahead log to
// reach the disk (a PostgreSQL crash, not a test's, could lose the last
// few); a commit is still seen by every other connection the moment it
// returns, so no test can tell, except by taking less time: a commit
// cost about 2.2 ms with the wait on this project's CI machines and
// 0.75 ms without, and a suite makes thousands in a row (docs/testing.md).
func (db *database) urlOf(schema string) string {
	u := db.base
	q := u.Query()
	q.Set("search_path", schema)
	q.Set("synchronous_commit", "off")
	u.RawQuery = q.Encode()
	return u.String()
}

func quote(name string) string { return pgx.Identifier{name}.Sanitize() }
