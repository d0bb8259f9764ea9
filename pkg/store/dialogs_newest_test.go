package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/parleyhq/parley/pkg/store"
)

// TestDialogsListNewestFirstPageByPage: a descending page starts at the
// largest id (ids begin with their time), and its cursor pages on down
// without a gap or a repeat.
func TestDialogsListNewestFirstPageByPage(t *testing.T) {
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		b := mustBot(t, st, tn.ID, "support")
		var want []string
		for range 5 {
			want = append(want, mustDialog(t, st, b).ID)
		}
		slices.Sort(want)
		slices.Reverse(want)
		var got []string
		cursor := ""
		for page := 0; page < 5; page++ {
			rows, next, err := st.Tenant(tn.ID).Dialogs().List(ctx, store.DialogFilter{}, store.Page{Limit: 2, Cursor: cursor, Desc: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range rows {
				got = append(got, d.ID)
			}
			if cursor = next; cursor == "" {
				break
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("newest first the pages list %q; want %q", got, want)
		}
	})
}
