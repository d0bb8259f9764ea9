package storetest

import (
	"fmt"
	"testing"

	"github.com/parleyhq/parley/pkg/store"
)

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
