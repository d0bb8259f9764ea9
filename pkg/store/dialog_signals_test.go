package store_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// TestASaveTellsOtherProcessesOnlyWhenSomeoneListens: every NOTIFY
// commits under one lock of the whole cluster and wakes every process, so
// a run's save sends one only while a live stream follows the dialog, or
// when it hands the dialog off (the operators' inbox). What another
// process hears is checked by a probe signal sent after each save:
// notifications arrive in the order their transactions committed, so a
// save's would come before it.
func TestASaveTellsOtherProcessesOnlyWhenSomeoneListens(t *testing.T) {
	t.Parallel()
	url := os.Getenv("PARLEY_TEST_DATABASE_URL")
	if url == "" {
		t.Skip("set PARLEY_TEST_DATABASE_URL: only PostgreSQL signals other processes")
	}
	st, other := storetest.OpenPostgresTwice(t, url)
	ctx := context.Background()
	tn := mustTenant(t, st, "acme")
	ts := st.Tenant(tn.ID)
	bot := mustBot(t, st, tn.ID, "support")
	heard := make(chan string, 64)
	other.Signals().OnDialog(func(tenantID, dialogID, signal string) {
		if tenantID == tn.ID {
			heard <- dialogID + " " + signal
		}
	})
	probe := mustDialog(t, st, bot)
	// heardBeforeProbe sends a probe and returns what other heard up to it.
	heardBeforeProbe := func(t *testing.T) []string {
		t.Helper()
		if err := ts.Dialogs().Signal(ctx, probe.ID, "probe"); err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			select {
			case s := <-heard:
				if s == probe.ID+" probe" {
					return got
				}
				got = append(got, s)
			case <-time.After(10 * time.Second):
				t.Fatalf("the probe was never heard (after %v)", got)
			}
		}
	}
	// The listener connects in its own time: probe until it hears.
	for deadline := time.Now().Add(10 * time.Second); ; {
		_ = ts.Dialogs().Signal(ctx, probe.ID, "probe")
		select {
		case <-heard:
		case <-time.After(100 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("the other process never listened")
			}
			continue
		}
		break
	}
	heardBeforeProbe(t) // drain the probes sent while it connected
	save := func(t *testing.T, d *store.Dialog, status string) {
		t.Helper()
		if ok, err := ts.Leases().Acquire(ctx, d.ID, "p1", time.Now(), minute); err != nil || !ok {
			t.Fatalf("lease: %v %v", ok, err)
		}
		if _, err := ts.Dialogs().SaveRun(ctx, store.Save{DialogID: d.ID, Status: status, State: "{}", Release: true, Owner: "p1"}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name   string
		until  time.Duration // the stream's mark, from now; 0 for none
		status string
		heard  bool
	}{
		{"a dialog nobody follows: nothing", 0, store.DialogActive, false},
		{"a followed dialog: its streams hear", minute, store.DialogActive, true},
		{"a mark run out: nothing", -minute, store.DialogActive, false},
		{"a handoff nobody follows: the inbox hears", 0, store.DialogHandoff, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := mustDialog(t, st, bot)
			if c.until != 0 {
				if err := ts.Dialogs().Follow(ctx, d.ID, time.Now().Add(c.until)); err != nil {
					t.Fatal(err)
				}
			}
			save(t, d, c.status)
			var want []string
			if c.heard {
				want = []string{d.ID + " " + store.SignalChanged}
			}
			if got := heardBeforeProbe(t); !slices.Equal(got, want) {
				t.Fatalf("heard %v, want %v", got, want)
			}
		})
	}
	t.Run("a later mark keeps the longer one", func(t *testing.T) {
		d := mustDialog(t, st, bot)
		for _, until := range []time.Duration{minute, -minute} {
			if err := ts.Dialogs().Follow(ctx, d.ID, time.Now().Add(until)); err != nil {
				t.Fatal(err)
			}
		}
		save(t, d, store.DialogActive)
		if got := heardBeforeProbe(t); len(got) != 1 {
			t.Fatalf("heard %v", got)
		}
	})
	t.Run("marking an unknown dialog is not found", func(t *testing.T) {
		wantErr(t, ts.Dialogs().Follow(ctx, "nope", time.Now()), store.ErrNotFound)
	})
}
