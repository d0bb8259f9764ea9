package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
)

func TestReadMarksMoveOnlyForwardStayInTheirTenantAndGoWithTheirDialog(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		a, b := mustTenant(t, st, "tenant-a"), mustTenant(t, st, "tenant-b")
		asA, asB := st.Tenant(a.ID), st.Tenant(b.ID)
		bot := mustBot(t, st, a.ID, "support")
		d := mustDialog(t, st, bot)
		var seqs []int64
		for range 3 {
			seqs = append(seqs, mustAppend(t, st, d, "user", store.MessageComplete).Seq)
		}
		at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
		mark := func(side string, seq int64) bool {
			t.Helper()
			moved, err := asA.DialogReads().Mark(ctx, d.ID, side, seq, at)
			if err != nil {
				t.Fatal(err)
			}
			return moved
		}
		seqOf := func(side string) int64 {
			t.Helper()
			marks, err := asA.DialogReads().Of(ctx, d.ID)
			if err != nil {
				t.Fatal(err)
			}
			return marks[side].Seq
		}

		for _, c := range []struct {
			name      string
			side      string
			seq, want int64
			moved     bool
		}{
			{"a first mark is kept", store.ReadByOperator, seqs[1], seqs[1], true},
			{"an older one changes nothing", store.ReadByOperator, seqs[0], seqs[1], false},
			{"a newer one moves it", store.ReadByOperator, seqs[2], seqs[2], true},
			{"one past the newest message marks the newest", store.ReadByUser, seqs[2] + 10, seqs[2], true},
		} {
			t.Run(c.name, func(t *testing.T) {
				if moved := mark(c.side, c.seq); moved != c.moved || seqOf(c.side) != c.want {
					t.Fatalf("moved %v, mark %d; want %v, %d", moved, seqOf(c.side), c.moved, c.want)
				}
			})
		}
		t.Run("another tenant neither reads nor writes them", func(t *testing.T) {
			if marks, err := asB.DialogReads().Of(ctx, d.ID); err != nil || len(marks) != 0 {
				t.Fatalf("tenant b reads %+v, %v", marks, err)
			}
			_, err := asB.DialogReads().Mark(ctx, d.ID, store.ReadByUser, 1, at)
			wantErr(t, err, store.ErrNotFound)
		})
		t.Run("deleting the dialog deletes them", func(t *testing.T) {
			if _, err := asA.Dialogs().Delete(ctx, d.ID, time.Now()); err != nil {
				t.Fatal(err)
			}
			if marks, err := asA.DialogReads().Of(ctx, d.ID); err != nil || len(marks) != 0 {
				t.Fatalf("marks outlive their dialog: %+v, %v", marks, err)
			}
		})
	})
}
