package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/store"
)

// dialogQueries are the shapes of the statements every turn runs against
// one dialog's rows.
var dialogQueries = map[string]string{
	"list messages":  "SELECT id FROM messages WHERE tenant_id = ? AND dialog_id = ? AND seq > 0 ORDER BY seq",
	"mark interrupt": "UPDATE messages SET status = 'interrupted' WHERE tenant_id = ? AND dialog_id = ? AND status = 'streaming'",
	"list calls":     "SELECT call_id FROM tool_calls WHERE tenant_id = ? AND dialog_id = ? ORDER BY created_at, call_id",
}

// TestDialogQueriesReadOnlyTheDialog: a turn's statements find a dialog's
// rows through the dialog's index, so their cost does not grow with the
// rest of the tenant. The tables have no planner statistics yet, as on a
// new installation or right after a burst of traffic: PostgreSQL then
// rated a tenant index as selective as the dialog's, combined the two and
// read every message of the tenant to find the small dialog's few.
func TestDialogQueriesReadOnlyTheDialog(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := mustBot(t, st, mustTenant(t, st, "acme").ID, "support")
		small, large := mustDialog(t, st, b), mustDialog(t, st, b)
		for range 3 {
			mustAppend(t, st, small, "user", store.MessageComplete)
		}
		db := st.DB().WithContext(ctx)
		fill := `INSERT INTO messages (id, tenant_id, dialog_id, seq, kind, role, content, text, status, meta, created_at)
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
SELECT 'msg_fill_' || i, ?, ?, i, 'user', 'user', '[]', 'hello', 'complete', '{}', CURRENT_TIMESTAMP FROM n`
		if err := db.Exec(fill, large.TenantID, large.ID).Error; err != nil {
			t.Fatal(err)
		}
		for name, q := range dialogQueries {
			t.Run(name, func(t *testing.T) {
				if st.Dialect() == store.DialectPostgres {
					if read := rowsRead(t, st, q, small.TenantID, small.ID); read > 10 {
						t.Fatalf("read %d rows to find a dialog of 3 messages", read)
					}
					return
				}
				if plan := sqlitePlan(t, st, q, small.TenantID, small.ID); !strings.Contains(plan, "ux_messages_dialog_seq") &&
					!strings.Contains(plan, "sqlite_autoindex_tool_calls") && !strings.Contains(plan, "ix_messages_streaming") {
					t.Fatalf("plan does not use the dialog's index:\n%s", plan)
				}
			})
		}
		// Every turn marks what a dead run left streaming: that must not
		// read the conversation, however long.
		t.Run("marking a long dialog's streaming replies reads none of its other messages", func(t *testing.T) {
			q := dialogQueries["mark interrupt"]
			if st.Dialect() == store.DialectPostgres {
				if read := rowsRead(t, st, q, large.TenantID, large.ID); read > 10 {
					t.Fatalf("read %d rows of a dialog of 3000 messages, none of them streaming", read)
				}
				return
			}
			if plan := sqlitePlan(t, st, q, large.TenantID, large.ID); !strings.Contains(plan, "ix_messages_streaming") {
				t.Fatalf("plan does not use the streaming index:\n%s", plan)
			}
		})
	})
}

// rowsRead runs q under PostgreSQL's EXPLAIN ANALYZE, in a transaction
// rolled back, and sums the rows its scans produced.
func rowsRead(t *testing.T, st *store.Store, q string, args ...any) int {
	t.Helper()
	tx := st.DB().Begin()
	defer tx.Rollback()
	var out string
	if err := tx.Raw("EXPLAIN (ANALYZE, FORMAT JSON) "+q, args...).Row().Scan(&out); err != nil {
		t.Fatal(err)
	}
	var plans []struct{ Plan planNode }
	if err := json.Unmarshal([]byte(out), &plans); err != nil || len(plans) != 1 {
		t.Fatalf("plan %s: %v", out, err)
	}
	return plans[0].Plan.scanned()
}

type planNode struct {
	NodeType   string     `json:"Node Type"`
	ActualRows int        `json:"Actual Rows"`
	Removed    int        `json:"Rows Removed by Filter"`
	Plans      []planNode `json:"Plans"`
}

// scanned is the rows the scans below n produced or filtered away.
func (n planNode) scanned() int {
	total := 0
	if strings.Contains(n.NodeType, "Scan") {
		total += n.ActualRows + n.Removed
	}
	for _, c := range n.Plans {
		total += c.scanned()
	}
	return total
}

// sqlitePlan is SQLite's EXPLAIN QUERY PLAN of q, one line per step.
func sqlitePlan(t *testing.T, st *store.Store, q string, args ...any) string {
	t.Helper()
	rows, err := st.DB().Raw("EXPLAIN QUERY PLAN "+q, args...).Rows()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	return strings.Join(lines, "\n")
}
