package store_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// TestSQLiteWritesReachTheFileWithoutACommitPayingForIt: a commit only
// appends to SQLite's write-ahead log, and the store's checkpointer copies
// the log into the database file in the background. Without it, SQLite
// copies the log inside whichever commit makes it cross 1000 pages, and
// writes smaller than that never reach the file while the store is open.
func TestSQLiteWritesReachTheFileWithoutACommitPayingForIt(t *testing.T) {
	t.Parallel()
	st := storetest.OpenSQLite(t)
	ctx := context.Background()
	size := func() int64 {
		t.Helper()
		fi, err := os.Stat(st.Location())
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size() // the migrated template's copy: its pages are all in the file
	tn := mustTenant(t, st, "acme")
	d := mustDialog(t, st, mustBot(t, st, tn.ID, "support"))
	page := strings.Repeat("x", 2000)
	for range 200 { // ~400 KiB: about 100 pages, far below SQLite's own threshold
		if err := st.Tenant(tn.ID).Messages().Append(ctx, &store.Message{TenantID: tn.ID, DialogID: d.ID, Kind: "user", Role: "user", Text: page}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for size() < before+300<<10 {
		if time.Now().After(deadline) {
			t.Fatalf("the database file grew from %d to %d bytes in 5 s: the log was not checkpointed", before, size())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
