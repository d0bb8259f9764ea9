package storetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/parleyhq/parley/pkg/store"
)

// SQLiteDataDir returns a data directory private to t that holds a
// migrated, empty parley.db, for a store or a server (PARLEY_DATA_DIR) to
// open.
func SQLiteDataDir(t testing.TB) string {
	t.Helper()
	file, err := sqliteTemplate()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "parley.db"), file, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// sqliteTemplate migrates a database once per test process and returns
// its file, self-contained (VACUUM INTO leaves no write-ahead log beside
// it), to copy for each test.
var sqliteTemplate = sync.OnceValues(func() ([]byte, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "parley-storetest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, store.Config{DataDir: dir})
	if err != nil {
		return nil, fmt.Errorf("storetest: open the sqlite template: %w", err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("storetest: migrate the sqlite template: %w", err)
	}
	out := filepath.Join(dir, "template.db")
	if err := st.DB().Exec("VACUUM INTO ?", out).Error; err != nil {
		return nil, fmt.Errorf("storetest: copy the sqlite template: %w", err)
	}
	return os.ReadFile(out)
})
