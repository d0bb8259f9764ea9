package dialog_test

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/store"
)

// storedWhenSent is a sink that, as each message event arrives, reads
// that message's row: what a caller who reacts to the event would find.
type storedWhenSent struct {
	e      *rtEnv
	dialog string
	status map[string]string // message id -> its row's status when its event came
}

func (s *storedWhenSent) Send(ev agent.Event) {
	m, ok := ev.(dialog.MessageEvent)
	if !ok {
		return
	}
	rows, _ := s.e.store.Tenant(s.e.tenant.ID).Messages().List(ctx, s.dialog, 0)
	for _, r := range rows {
		if r.ID == m.Message.ID {
			s.status[r.ID] = r.Status
		}
	}
}

// TestAReplyIsStoredBeforeItsEventGoesOut: the last reply of a run is
// written with the run's final save, and its message event waits for that
// write, so whoever sees the event finds the reply complete in the store.
// A reply followed by more of the loop (a tool call) is written at once.
func TestAReplyIsStoredBeforeItsEventGoesOut(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		d := e.dialog(t)
		e.llm.Enqueue(
			llmtest.ServerReply{Text: "Let me look.", ToolCalls: []llmtest.ServerCall{{ID: "c1", Name: "lookup_order", Arguments: `{"order":"A7"}`}}},
			llmtest.ServerReply{Text: "Order A7 shipped."},
		)
		sink := &storedWhenSent{e: e, dialog: d.ID, status: map[string]string{}}
		turn, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "Where is A7?"}, sink)
		if err != nil || turn.Done == nil || turn.Done.Text != "Order A7 shipped." {
			t.Fatalf("turn %+v, %v", turn, err)
		}
		if len(turn.Messages) != 4 {
			t.Fatalf("turn messages %+v", turn.Messages)
		}
		for _, m := range turn.Messages {
			if got := sink.status[m.ID]; got != store.MessageComplete {
				t.Errorf("the %s message %q was %q in the store when its event went out", m.Kind, m.Text, got)
			}
		}
	})
}

// TestAWarmTurnCostsThreeStatements guards the cost of the most common
// turn on PostgreSQL, a message sent with an API key: the key, remembered,
// costs none; taking the lease, which checks the caller may chat with the
// dialog and stores the user's text and the row the reply streams into;
// reading the secrets the bot's tools use (this bot has one); and one save
// that completes the reply and releases the lease.
func TestAWarmTurnCostsThreeStatements(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		if e.store.Dialect() != store.DialectPostgres {
			t.Skip("SQLite runs a save as several statements of one transaction")
		}
		key, err := e.svc.APIKeys().Create(ctx, e.admin, "shop", platform.APIKeyInput{Name: "chat", Scopes: []string{"chat"}})
		if err != nil {
			t.Fatal(err)
		}
		d := e.dialog(t)
		n := countStatements(e.store.DB()) // the store is this test's own
		send := func() {
			p := platformtest.Authenticate(t, e.svc, key.Key)
			e.llm.Enqueue(llmtest.ServerReply{Text: "fine"})
			if _, err := e.rt.SendMessage(ctx, p, "shop", d.ID, dialog.SendInput{Text: "and now?"}, nil); err != nil {
				t.Fatal(err)
			}
		}
		send() // warms the bot, its tools and the dialog's history
		awaitKeyRemembered(t, e, key.Key, n)
		n.Store(0)
		send()
		if got := n.Load(); got != 3 {
			t.Fatalf("a warm turn ran %d statements, want 3", got)
		}
	})
}

// TestStartingAWarmDialogCostsTwoStatements guards the cost of starting a
// dialog on PostgreSQL with an API key, once the key, the tenant and the
// bot's published version are known: the bot, read on every start because
// publishing changes it and every server must see that at once, and the
// insert of the dialog. Its first turn on the server that started it then
// costs what any warm turn does: the dialog is not read back.
func TestStartingAWarmDialogCostsTwoStatements(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		if e.store.Dialect() != store.DialectPostgres {
			t.Skip("SQLite hears no revocations, so it reads the key on every request")
		}
		key, err := e.svc.APIKeys().Create(ctx, e.admin, "shop", platform.APIKeyInput{Name: "chat", Scopes: []string{"chat"}})
		if err != nil {
			t.Fatal(err)
		}
		n := countStatements(e.store.DB()) // the store is this test's own
		start := func() dialog.Dialog {
			p := platformtest.Authenticate(t, e.svc, key.Key)
			in := dialog.CreateDialogInput{UserID: "u1", Context: map[string]string{"tier": "gold"}}
			d, err := e.rt.Dialogs().Create(ctx, p, "shop", "helper", in)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		send := func(d dialog.Dialog) {
			p := platformtest.Authenticate(t, e.svc, key.Key)
			e.llm.Enqueue(llmtest.ServerReply{Text: "fine"})
			if _, err := e.rt.SendMessage(ctx, p, "shop", d.ID, dialog.SendInput{Text: "hello?"}, nil); err != nil {
				t.Fatal(err)
			}
		}
		send(start()) // warms the tenant, its limits and the bot's published version
		awaitKeyRemembered(t, e, key.Key, n)
		n.Store(0)
		d := start()
		if got := n.Load(); got != 2 {
			t.Fatalf("starting a warm dialog ran %d statements, want 2", got)
		}
		n.Store(0)
		send(d)
		// The lease, the secrets of the bot's one tool, the save.
		if got := n.Load(); got != 3 {
			t.Fatalf("the new dialog's first turn ran %d statements, want 3", got)
		}
	})
}

// awaitKeyRemembered waits until authenticating with key runs no
// statement (n counts them): the store remembers keys once it hears
// revocations, which its listener starts doing in its own time.
func awaitKeyRemembered(t *testing.T, e *rtEnv, key string, n *atomic.Int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		before := n.Load()
		platformtest.Authenticate(t, e.svc, key)
		if n.Load() == before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the key is still read on every request after 10 s")
		}
	}
}

// TestTheReplysRowIsStoredWithTheUsersText: the row a reply streams into
// is stored with the lease, so a crash while the model thinks leaves it
// behind (as interrupted, once the lease runs out); a model that fails
// before any text leaves no row, as if none had been stored.
func TestTheReplysRowIsStoredWithTheUsersText(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		t.Run("while the model thinks the reply is there, streaming", func(t *testing.T) {
			d := e.dialog(t)
			done := e.sendSlowly(e.admin, d.ID, "where?", "Here.")
			if h := e.history(t, d.ID); !slices.Equal(h, []string{"user:complete:where?", "assistant:streaming:"}) {
				t.Fatalf("history while the model thinks %q", h)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if h := e.history(t, d.ID); !slices.Equal(h, []string{"user:complete:where?", "assistant:complete:Here."}) {
				t.Fatalf("history after the reply %q", h)
			}
		})
		t.Run("a model that fails before any text leaves the user's message and a note of the failure", func(t *testing.T) {
			d := e.dialog(t)
			e.llm.Enqueue(llmtest.ServerReply{Fault: &llmtest.Fault{Status: 400, Type: "invalid_request_error", Message: "no"}})
			turn, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "hello?"}, nil)
			if err != nil || turn.Done == nil || turn.Done.StopReason != agent.StopError {
				t.Fatalf("turn %+v, %v", turn, err)
			}
			want := []string{"user:complete:hello?", "system_event:complete:run failed: the language model rejected the request"}
			if h := e.history(t, d.ID); !slices.Equal(h, want) {
				t.Fatalf("history %q", h)
			}
		})
	})
}

// TestARunThatLostItsLeaseSavesNothing: a run that stalled past its
// lease, which another process then took, must not overwrite that
// process's dialog; its caller learns that the reply was not saved.
func TestARunThatLostItsLeaseSavesNothing(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		d := e.dialog(t)
		done := e.sendSlowly(e.admin, d.ID, "hello", "too late")
		// Another process takes the lease once it has run out.
		if _, err := e.store.Tenant(e.tenant.ID).Leases().Take(ctx, store.Take{TenantID: e.tenant.ID, DialogID: d.ID, Owner: "other-process",
			Now: e.clock.Now().Add(time.Hour), TTL: time.Hour}); err != nil {
			t.Fatal(err)
		}
		wantCode(t, <-done, platform.CodeConflict)
		if h := e.history(t, d.ID); !slices.Equal(h, []string{"user:complete:hello", "assistant:interrupted:"}) {
			t.Fatalf("history %q", h)
		}
		if l, err := e.store.Tenant(e.tenant.ID).Leases().Get(ctx, d.ID); err != nil || l.Owner != "other-process" {
			t.Fatalf("lease %+v, %v", l, err)
		}
	})
}

// batches is a sink that can take events together and keeps how they
// came: one list per Send or SendAll.
type batches struct{ all [][]string }

func (b *batches) Send(e agent.Event) { b.all = append(b.all, []string{e.Type()}) }

func (b *batches) SendAll(events []agent.Event) {
	var types []string
	for _, e := range events {
		types = append(types, e.Type())
	}
	b.all = append(b.all, types)
}

// TestAStoredReplysEventsLeaveTogether: the reply's message event and the
// events the loop sent while the reply waited for its save are due at
// once, so a sink that takes events together gets them in one call, in
// order, and a stream flushes once for them.
func TestAStoredReplysEventsLeaveTogether(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		d := e.dialog(t)
		e.llm.Enqueue(llmtest.ServerReply{Text: "Fine."})
		sink := &batches{}
		if _, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "hi"}, sink); err != nil {
			t.Fatal(err)
		}
		if last := sink.all[len(sink.all)-1]; !slices.Equal(last, []string{"message", "turn_end", "done"}) {
			t.Fatalf("calls %q", sink.all)
		}
	})
}
