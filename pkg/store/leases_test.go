package store_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
)

const minute = time.Minute

// now is a fixed instant, so lease expiry is decided by the times the test
// passes and never by how fast the machine is.
func now() time.Time { return time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC) }

func TestLeases(t *testing.T) {
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		d := mustDialog(t, st, mustBot(t, st, tn.ID, "support"))
		acquire := func(owner string, at time.Time) bool {
			t.Helper()
			ok, err := st.AcquireLease(ctx, tn.ID, d.ID, owner, at, minute)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		steps := []struct {
			name string
			do   func() bool
			want bool
		}{
			{"the first owner gets a free lease", func() bool { return acquire("p1", now()) }, true},
			{"a second owner is refused while it is live", func() bool { return acquire("p2", now().Add(30*time.Second)) }, false},
			{"the holder may take it again", func() bool { return acquire("p1", now().Add(30*time.Second)) }, true},
			{"the holder renews it", func() bool { return st.RenewLease(ctx, tn.ID, d.ID, "p1", now().Add(time.Minute), minute) == nil }, true},
			{"a renewed lease still refuses others", func() bool { return acquire("p2", now().Add(90*time.Second)) }, false},
			{"an expired lease is taken over", func() bool { return acquire("p2", now().Add(3*minute)) }, true},
			{"the old holder can no longer renew", func() bool {
				return st.RenewLease(ctx, tn.ID, d.ID, "p1", now().Add(3*minute), minute) == nil
			}, false},
			{"a release by a non-holder changes nothing", func() bool {
				_ = st.ReleaseLease(ctx, tn.ID, d.ID, "p1")
				return acquire("p3", now().Add(3*minute))
			}, false},
			{"after the holder releases anyone may take it", func() bool {
				_ = st.ReleaseLease(ctx, tn.ID, d.ID, "p2")
				return acquire("p3", now().Add(3*minute))
			}, true},
		}
		for _, s := range steps {
			t.Run(s.name, func(t *testing.T) {
				if got := s.do(); got != s.want {
					t.Fatalf("got %v, want %v", got, s.want)
				}
			})
		}
		t.Run("losing a renewal is a conflict", func(t *testing.T) {
			wantErr(t, st.RenewLease(ctx, tn.ID, d.ID, "nobody", now(), minute), store.ErrConflict)
		})
	})
}

func TestLeaseRaceHasOneWinner(t *testing.T) {
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		d := mustDialog(t, st, mustBot(t, st, tn.ID, "support"))
		for round, at := range []time.Time{now(), now().Add(5 * minute)} {
			t.Run(fmt.Sprintf("round %d: racing for a %s lease", round, map[int]string{0: "free", 1: "expired"}[round]), func(t *testing.T) {
				var wins atomic.Int32
				var wg sync.WaitGroup
				for i := range 8 {
					wg.Go(func() {
						ok, err := st.AcquireLease(ctx, tn.ID, d.ID, fmt.Sprintf("r%d-p%d", round, i), at, minute)
						if err != nil {
							t.Error(err)
						}
						if ok {
							wins.Add(1)
						}
					})
				}
				wg.Wait()
				if wins.Load() != 1 {
					t.Fatalf("%d owners won", wins.Load())
				}
			})
		}
	})
}
