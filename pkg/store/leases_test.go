package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		ts := st.Tenant(tn.ID)
		d := mustDialog(t, st, mustBot(t, st, tn.ID, "support"))
		acquire := func(owner string, at time.Time) bool {
			t.Helper()
			ok, err := ts.Leases().Acquire(ctx, d.ID, owner, at, minute)
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
			{"the holder renews it", func() bool {
				return ts.Leases().Renew(ctx, d.ID, "p1", now().Add(time.Minute), minute) == nil
			}, true},
			{"a renewed lease still refuses others", func() bool { return acquire("p2", now().Add(90*time.Second)) }, false},
			{"an expired lease is taken over", func() bool { return acquire("p2", now().Add(3*minute)) }, true},
			{"the old holder can no longer renew", func() bool {
				return ts.Leases().Renew(ctx, d.ID, "p1", now().Add(3*minute), minute) == nil
			}, false},
			{"a release by a non-holder changes nothing", func() bool {
				_ = ts.Leases().Release(ctx, d.ID, "p1")
				return acquire("p3", now().Add(3*minute))
			}, false},
			{"after the holder releases anyone may take it", func() bool {
				_ = ts.Leases().Release(ctx, d.ID, "p2")
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
			wantErr(t, ts.Leases().Renew(ctx, d.ID, "nobody", now(), minute), store.ErrConflict)
		})
	})
}

func TestLeaseRaceHasOneWinner(t *testing.T) {
	t.Parallel()
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
						owner := fmt.Sprintf("r%d-p%d", round, i)
						ok, err := st.Tenant(tn.ID).Leases().Acquire(ctx, d.ID, owner, at, minute)
						if i%2 == 1 { // the run's way of taking it must race just as safely
							var got *store.Dialog
							got, err = st.Tenant(tn.ID).Leases().Take(ctx, store.Take{TenantID: tn.ID, DialogID: d.ID, Owner: owner, Now: at, TTL: minute})
							ok = got != nil
							if errors.Is(err, store.ErrConflict) {
								err = nil
							}
						}
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

func TestTakeLease(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		ts := st.Tenant(tn.ID)
		d := mustDialog(t, st, mustBot(t, st, tn.ID, "support"))
		status := func(m *store.Message) string {
			t.Helper()
			rows, err := ts.Messages().List(ctx, d.ID, m.Seq-1)
			if err != nil || len(rows) == 0 {
				t.Fatalf("rows %+v, %v", rows, err)
			}
			return rows[0].Status
		}
		take := func(owner string, at time.Time) bool {
			t.Helper()
			got, err := ts.Leases().Take(ctx, store.Take{TenantID: tn.ID, DialogID: d.ID, Owner: owner, Now: at, TTL: minute})
			if errors.Is(err, store.ErrConflict) {
				return false
			}
			if err != nil || got.ID != d.ID || got.TenantID != tn.ID {
				t.Fatalf("took %+v, %v", got, err)
			}
			return true
		}
		if !take("crashed", now()) {
			t.Fatal("a free lease was refused")
		}
		// What the holder wrote before it crashed.
		done := mustAppend(t, st, d, "assistant", "")
		cut := mustAppend(t, st, d, "assistant", store.MessageStreaming)
		t.Run("a lease still held leaves the holder's streaming reply alone", func(t *testing.T) {
			if take("p2", now().Add(30*time.Second)) {
				t.Fatal("a live lease was taken")
			}
			if got := status(cut); got != store.MessageStreaming {
				t.Fatalf("status %s", got)
			}
		})
		t.Run("taking an expired lease flags the dead holder's streaming reply interrupted", func(t *testing.T) {
			if !take("p2", now().Add(2*minute)) {
				t.Fatal("an expired lease was refused")
			}
			if got := status(cut); got != store.MessageInterrupted {
				t.Fatalf("status %s", got)
			}
		})
		t.Run("a complete message stays complete", func(t *testing.T) {
			if got := status(done); got != store.MessageComplete {
				t.Fatalf("status %s", got)
			}
		})
		t.Run("the winner reads what the previous holder saved as it let go", func(t *testing.T) {
			if seq, err := ts.Dialogs().SaveRun(ctx, store.Save{TenantID: tn.ID, DialogID: d.ID, Status: store.DialogPaused, State: `{"turn":7}`, Release: true, Owner: "p2"}); err != nil || seq != cut.Seq {
				t.Fatalf("saved at seq %d (last message %d), %v", seq, cut.Seq, err)
			}
			got, err := ts.Leases().Take(ctx, store.Take{TenantID: tn.ID, DialogID: d.ID, Owner: "p3", Now: now().Add(3 * minute), TTL: minute})
			if err != nil || got.Status != store.DialogPaused || got.State != `{"turn":7}` || got.LastSeq != cut.Seq {
				t.Fatalf("took %+v, %v", got, err)
			}
		})
		t.Run("another tenant cannot take the lease of this tenant's dialog, held or free", func(t *testing.T) {
			other := mustTenant(t, st, "other")
			_, err := st.Tenant(other.ID).Leases().Take(ctx, store.Take{TenantID: other.ID, DialogID: d.ID, Owner: "p4", Now: now().Add(10 * minute), TTL: minute})
			wantErr(t, err, store.ErrNotFound)
			if err := ts.Leases().Release(ctx, d.ID, "p3"); err != nil {
				t.Fatal(err)
			}
			_, err = st.Tenant(other.ID).Leases().Take(ctx, store.Take{TenantID: other.ID, DialogID: d.ID, Owner: "p4", Now: now().Add(10 * minute), TTL: minute})
			wantErr(t, err, store.ErrNotFound)
			if _, err := ts.Leases().Get(ctx, d.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("a lease was left behind: %v", err)
			}
		})
	})
}

// TestTakeLeaseWaitsForTheLastSave: a run's last save (state and release
// in one commit) can commit while the next run's Leases.Take waits for the
// lease row, after that statement took its snapshot. The new holder must
// still get the saved state, or it would answer from the state before.
func TestTakeLeaseWaitsForTheLastSave(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		if st.Dialect() != store.DialectPostgres {
			t.Skip("SQLite has a single writer: no statement waits inside another's commit")
		}
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		b := mustBot(t, st, tn.ID, "support")
		for _, withText := range []bool{false, true} {
			t.Run(map[bool]string{false: "resuming", true: "with the user's text"}[withText], func(t *testing.T) {
				d := mustDialog(t, st, b)
				if !mustAcquire(t, st, d, "first") {
					t.Fatal("a free lease was refused")
				}
				// The first run's last save, held open.
				save := st.DB().Begin()
				defer save.Rollback()
				var pid int
				if err := save.Raw("SELECT pg_backend_pid()").Scan(&pid).Error; err != nil {
					t.Fatal(err)
				}
				if err := save.Exec(`WITH released AS (DELETE FROM dialog_leases WHERE dialog_id = ?)
UPDATE dialogs SET state = '{"turn":2}', status = 'paused' WHERE id = ?`, d.ID, d.ID).Error; err != nil {
					t.Fatal(err)
				}
				take := store.Take{TenantID: tn.ID, DialogID: d.ID, Owner: "second", Now: now(), TTL: minute}
				if withText {
					take.First = &store.Message{Kind: "user", Role: "user", Text: "hello"}
				}
				took := make(chan *store.Dialog, 1)
				go func() {
					got, err := st.Tenant(take.TenantID).Leases().Take(ctx, take)
					if err != nil {
						t.Error(err)
					}
					took <- got
				}()
				waitBlockedBy(t, st, pid)
				if err := save.Commit().Error; err != nil {
					t.Fatal(err)
				}
				if got := <-took; got == nil || got.State != `{"turn":2}` || got.Status != store.DialogPaused {
					t.Fatalf("the new holder read %+v", got)
				}
				if withText && take.First.Status != store.MessageQueued {
					t.Fatalf("the text was stored %s in a dialog the save paused", take.First.Status)
				}
			})
		}
	})
}

// TestTakeLeaseStoresTheFirstText: the text that starts a run is stored
// with the lease, where the loop will put it, and only when the lease is
// won.
func TestTakeLeaseStoresTheFirstText(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		ts := st.Tenant(tn.ID)
		d := mustDialog(t, st, mustBot(t, st, tn.ID, "support"))
		before := mustAppend(t, st, d, "assistant", "")
		text := func(s string) *store.Message { return &store.Message{Kind: "user", Role: "user", Text: s} }
		reply := func() *store.Message { return &store.Message{Kind: "assistant", Role: "assistant"} }
		take := func(owner string, at time.Time, first, reply *store.Message) (*store.Dialog, error) {
			return ts.Leases().Take(ctx, store.Take{TenantID: tn.ID, DialogID: d.ID, Owner: owner, Now: at, TTL: minute, First: first, Reply: reply})
		}
		texts := func() []string {
			t.Helper()
			rows, err := ts.Messages().List(ctx, d.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, r := range rows {
				out = append(out, fmt.Sprintf("%d:%s:%s:%s", r.Seq, r.Kind, r.Status, r.Text))
			}
			return out
		}
		release := func(owner, status string) {
			t.Helper()
			if _, err := ts.Dialogs().SaveRun(ctx, store.Save{TenantID: tn.ID, DialogID: d.ID, Status: status, State: "{}", Release: true, Owner: owner}); err != nil {
				t.Fatal(err)
			}
		}
		want := []string{fmt.Sprintf("%d:assistant:complete:assistant", before.Seq)}
		t.Run("in an active dialog it is the next message, complete", func(t *testing.T) {
			first := text("hello")
			got, err := take("p1", now(), first, nil)
			if err != nil || first.Seq != before.Seq+1 || got.LastSeq != first.Seq || first.Status != store.MessageComplete || first.ID == "" {
				t.Fatalf("took %+v with %+v, %v", got, first, err)
			}
			want = append(want, fmt.Sprintf("%d:user:complete:hello", first.Seq))
			if got := texts(); !slices.Equal(got, want) {
				t.Fatalf("messages %q, want %q", got, want)
			}
		})
		t.Run("a lease someone holds stores nothing", func(t *testing.T) {
			_, err := take("p2", now().Add(time.Second), text("too soon"), reply())
			wantErr(t, err, store.ErrConflict)
			if got := texts(); !slices.Equal(got, want) {
				t.Fatalf("messages %q, want %q", got, want)
			}
		})
		t.Run("the reply is stored streaming right after it, with the dialog's version", func(t *testing.T) {
			release("p1", store.DialogActive)
			first, r := text("and you?"), reply()
			got, err := take("p2", now(), first, r)
			if err != nil || r.Seq != first.Seq+1 || got.LastSeq != r.Seq || r.Status != store.MessageStreaming || r.BotVersion != d.VersionNumber {
				t.Fatalf("took %+v with %+v and %+v, %v", got, first, r, err)
			}
			want = append(want, fmt.Sprintf("%d:user:complete:and you?", first.Seq), fmt.Sprintf("%d:assistant:streaming:", r.Seq))
			if got := texts(); !slices.Equal(got, want) {
				t.Fatalf("messages %q, want %q", got, want)
			}
			t.Run("and a reply that never came is discarded", func(t *testing.T) {
				if err := ts.Messages().DiscardReply(ctx, r.ID); err != nil {
					t.Fatal(err)
				}
				want = want[:len(want)-1]
				if got := texts(); !slices.Equal(got, want) {
					t.Fatalf("messages %q, want %q", got, want)
				}
			})
			t.Run("while a complete message is never discarded", func(t *testing.T) {
				if err := ts.Messages().DiscardReply(ctx, first.ID); err != nil {
					t.Fatal(err)
				}
				if got := texts(); !slices.Equal(got, want) {
					t.Fatalf("messages %q, want %q", got, want)
				}
			})
		})
		t.Run("a text stored already under its id is not stored again", func(t *testing.T) {
			release("p2", store.DialogActive)
			again := text("and you?")
			again.ID = want2ID(t, st, tn.ID, d.ID, "and you?")
			r := reply()
			got, err := take("p2b", now(), again, r)
			if err != nil || again.Seq != 0 || r.Seq == 0 || got.LastSeq != r.Seq {
				t.Fatalf("took %+v with %+v and %+v, %v", got, again, r, err)
			}
			if err := ts.Messages().DiscardReply(ctx, r.ID); err != nil {
				t.Fatal(err)
			}
			if got := texts(); !slices.Equal(got, want) {
				t.Fatalf("messages %q, want %q", got, want)
			}
			release("p2b", store.DialogActive)
		})
		t.Run("in a paused dialog it is queued, and no reply is stored", func(t *testing.T) {
			if _, err := ts.Leases().Take(ctx, store.Take{TenantID: tn.ID, DialogID: d.ID, Owner: "p2c", Now: now(), TTL: minute}); err != nil {
				t.Fatal(err)
			}
			release("p2c", store.DialogPaused)
			first, r := text("while paused"), reply()
			got, err := take("p3", now(), first, r)
			if err != nil || first.Status != store.MessageQueued || r.Seq != 0 || got.LastSeq != first.Seq {
				t.Fatalf("took %+v with %+v and %+v, %v", got, first, r, err)
			}
			want = append(want, fmt.Sprintf("%d:user:queued:while paused", first.Seq))
			if got := texts(); !slices.Equal(got, want) {
				t.Fatalf("messages %q, want %q", got, want)
			}
		})
	})
}

// TestASaveAfterTheLeaseWasLostWritesNothing: a run whose lease expired
// and was taken by another process (it stalled past its TTL) must not
// overwrite what the new holder saves, nor complete its reply.
func TestASaveAfterTheLeaseWasLostWritesNothing(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		ts := st.Tenant(tn.ID)
		d := mustDialog(t, st, mustBot(t, st, tn.ID, "support"))
		reply := mustAppend(t, st, d, "assistant", store.MessageStreaming)
		if !mustAcquire(t, st, d, "stalled") {
			t.Fatal("the first lease was refused")
		}
		if _, err := ts.Leases().Take(ctx, store.Take{TenantID: tn.ID, DialogID: d.ID, Owner: "new", Now: now().Add(2 * minute), TTL: minute}); err != nil {
			t.Fatal(err)
		}
		save := func(owner, state string, release bool) error {
			_, err := ts.Dialogs().SaveRun(ctx, store.Save{TenantID: tn.ID, DialogID: d.ID, Status: store.DialogActive, State: state,
				ReplyID: reply.ID, Reply: store.MessageUpdate{Content: `[]`, Text: "late", Meta: "{}", Status: store.MessageComplete},
				Owner: owner, Release: release})
			return err
		}
		wantErr(t, save("stalled", `{"by":"stalled"}`, true), store.ErrConflict)
		got, _ := ts.Dialogs().Get(ctx, d.ID)
		msgs, _ := ts.Messages().List(ctx, d.ID, 0)
		if got.State == `{"by":"stalled"}` || msgs[0].Status != store.MessageInterrupted || msgs[0].Text == "late" {
			t.Fatalf("the stalled run wrote: dialog %+v, reply %+v", got, msgs[0])
		}
		if l, err := ts.Leases().Get(ctx, d.ID); err != nil || l.Owner != "new" {
			t.Fatalf("lease %+v, %v", l, err)
		}
		if err := save("new", `{"by":"new"}`, true); err != nil {
			t.Fatalf("the holder's save: %v", err)
		}
	})
}

// TestTakeLeaseRefusesWhatTheCallerMayNotRun: the lease statement is
// also the turn's authorization (there is no read of the dialog before
// it), so a dialog of another bot or tenant, or one no run answers, gets
// no lease and keeps no text.
func TestTakeLeaseRefusesWhatTheCallerMayNotRun(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn, other := mustTenant(t, st, "acme"), mustTenant(t, st, "other")
		support, sales := mustBot(t, st, tn.ID, "support"), mustBot(t, st, tn.ID, "sales")
		d := mustDialog(t, st, sales)
		handedOff := mustDialog(t, st, support)
		if err := st.Tenant(tn.ID).Dialogs().SetStatus(ctx, handedOff.ID, store.DialogHandoff); err != nil {
			t.Fatal(err)
		}
		take := func(tenantID, botID string, dialog *store.Dialog) (*store.Dialog, error) {
			return st.Tenant(tenantID).Leases().Take(ctx, store.Take{TenantID: tenantID, DialogID: dialog.ID, BotID: botID, Owner: "p1", Now: now(), TTL: minute,
				First: &store.Message{Kind: "user", Role: "user", Text: "hi"}, Reply: &store.Message{Kind: "assistant", Role: "assistant"}})
		}
		untouched := func(t *testing.T, dialog *store.Dialog) {
			t.Helper()
			if msgs, err := st.Tenant(dialog.TenantID).Messages().List(ctx, dialog.ID, 0); err != nil || len(msgs) != 0 {
				t.Fatalf("messages %+v, %v", msgs, err)
			}
			if _, err := st.Tenant(dialog.TenantID).Leases().Get(ctx, dialog.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("a lease was taken: %v", err)
			}
		}
		t.Run("a dialog of another bot than the key's is not found", func(t *testing.T) {
			got, err := take(tn.ID, support.ID, d)
			wantErr(t, err, store.ErrNotFound)
			if got != nil {
				t.Fatalf("returned %+v", got)
			}
			untouched(t, d)
		})
		t.Run("another tenant's dialog is not found", func(t *testing.T) {
			_, err := take(other.ID, "", d)
			wantErr(t, err, store.ErrNotFound)
			untouched(t, d)
		})
		t.Run("a handed-off dialog is inactive and comes back for a human to read the text", func(t *testing.T) {
			got, err := take(tn.ID, "", handedOff)
			wantErr(t, err, store.ErrInactive)
			if got == nil || got.ID != handedOff.ID || got.Status != store.DialogHandoff {
				t.Fatalf("returned %+v", got)
			}
			untouched(t, handedOff)
		})
		t.Run("the key's own bot's dialog is leased", func(t *testing.T) {
			if got, err := take(tn.ID, sales.ID, d); err != nil || got.ID != d.ID {
				t.Fatalf("took %+v, %v", got, err)
			}
		})
	})
}

func mustAcquire(t *testing.T, st *store.Store, d *store.Dialog, owner string) bool {
	t.Helper()
	ok, err := st.Tenant(d.TenantID).Leases().Acquire(context.Background(), d.ID, owner, now(), minute)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// waitBlockedBy waits until a PostgreSQL backend waits for a lock held by
// the backend pid.
func waitBlockedBy(t *testing.T, st *store.Store, pid int) {
	t.Helper()
	for range 500 {
		var n int
		if err := st.DB().Raw("SELECT count(*) FROM pg_stat_activity WHERE ? = ANY(pg_blocking_pids(pid))", pid).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("nothing waited for the open save")
}

// want2ID is the id of the dialog's stored message with this text.
func want2ID(t *testing.T, st *store.Store, tenantID, dialogID, text string) string {
	t.Helper()
	rows, err := st.Tenant(tenantID).Messages().List(context.Background(), dialogID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Text == text {
			return r.ID
		}
	}
	t.Fatalf("no message %q", text)
	return ""
}
