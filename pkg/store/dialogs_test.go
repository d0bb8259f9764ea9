package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
)

func mustDialog(t *testing.T, st *store.Store, b *store.Bot) *store.Dialog {
	t.Helper()
	d := &store.Dialog{TenantID: b.TenantID, BotID: b.ID, VersionNumber: 1, UserID: "u1", Context: `{"tier":"gold"}`}
	if err := st.Tenant(d.TenantID).Dialogs().Create(context.Background(), d); err != nil {
		t.Fatalf("create dialog: %v", err)
	}
	return d
}

func mustAppend(t *testing.T, st *store.Store, d *store.Dialog, kind, status string) *store.Message {
	t.Helper()
	m := &store.Message{TenantID: d.TenantID, DialogID: d.ID, Kind: kind, Role: "user", Text: kind, Status: status}
	if err := st.Tenant(m.TenantID).Messages().Append(context.Background(), m); err != nil {
		t.Fatalf("append %s: %v", kind, err)
	}
	return m
}

// sameIDs reports whether rows are exactly the dialogs ids, in any order:
// ids made in the same millisecond have no defined order.
func sameIDs(rows []store.Dialog, ids ...string) bool {
	if len(rows) != len(ids) {
		return false
	}
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.ID] = true
	}
	for _, id := range ids {
		if !seen[id] {
			return false
		}
	}
	return true
}

func TestDialogs(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		ts := st.Tenant(tn.ID)
		support, sales := mustBot(t, st, tn.ID, "support"), mustBot(t, st, tn.ID, "sales")
		d1, d2, d3 := mustDialog(t, st, support), mustDialog(t, st, sales), mustDialog(t, st, support)

		t.Run("a new dialog is active with its context and an id that names it", func(t *testing.T) {
			got, err := ts.Dialogs().Get(ctx, d1.ID)
			if err != nil || got.Status != store.DialogActive || got.Context != `{"tier":"gold"}` || got.ID[:4] != "dlg_" {
				t.Fatalf("dialog %+v, %v", got, err)
			}
		})
		t.Run("dialogs filter by bot and status and page by cursor", func(t *testing.T) {
			if err := ts.Dialogs().SetStatus(ctx, d3.ID, store.DialogHandoff); err != nil {
				t.Fatal(err)
			}
			rows, _, err := ts.Dialogs().List(ctx, store.DialogFilter{BotID: support.ID}, store.Page{})
			if err != nil || !sameIDs(rows, d1.ID, d3.ID) {
				t.Fatalf("support dialogs %+v, %v", rows, err)
			}
			rows, _, err = ts.Dialogs().List(ctx, store.DialogFilter{Status: store.DialogHandoff}, store.Page{})
			if err != nil || len(rows) != 1 || rows[0].ID != d3.ID {
				t.Fatalf("handoff dialogs %+v, %v", rows, err)
			}
			page1, next, err := ts.Dialogs().List(ctx, store.DialogFilter{}, store.Page{Limit: 2})
			if err != nil || len(page1) != 2 || next == "" {
				t.Fatalf("page 1 %d rows, next %q, %v", len(page1), next, err)
			}
			page2, next, err := ts.Dialogs().List(ctx, store.DialogFilter{}, store.Page{Limit: 2, Cursor: next})
			if err != nil || len(page2) != 1 || next != "" {
				t.Fatalf("page 2 %+v, next %q, %v", page2, next, err)
			}
			if !sameIDs(append(page1, page2...), d1.ID, d2.ID, d3.ID) {
				t.Fatalf("pages %+v and %+v", page1, page2)
			}
		})
		t.Run("saving the state sets status and state together", func(t *testing.T) {
			if err := ts.Dialogs().SaveState(ctx, d1.ID, store.DialogPaused, `{"pending":[1]}`); err != nil {
				t.Fatal(err)
			}
			got, _ := ts.Dialogs().Get(ctx, d1.ID)
			if got.Status != store.DialogPaused || got.State != `{"pending":[1]}` {
				t.Fatalf("dialog %+v", got)
			}
		})
		t.Run("a run's last save completes its reply and lets its lease go in one commit", func(t *testing.T) {
			reply := mustAppend(t, st, d2, "assistant", store.MessageStreaming)
			if ok, err := ts.Leases().Acquire(ctx, d2.ID, "p1", time.Now(), time.Minute); !ok || err != nil {
				t.Fatalf("lease %v, %v", ok, err)
			}
			seq, err := ts.Dialogs().SaveRun(ctx, store.Save{TenantID: tn.ID, DialogID: d2.ID, Status: store.DialogActive, State: `{"turn":1}`,
				ReplyID: reply.ID, Reply: store.MessageUpdate{Content: `[]`, Text: "all done", Meta: "{}", Status: store.MessageComplete, Turn: 1},
				Release: true, Owner: "p1"})
			if err != nil || seq != reply.Seq {
				t.Fatalf("saved at seq %d (reply %d), %v", seq, reply.Seq, err)
			}
			msgs, err := ts.Messages().List(ctx, d2.ID, 0)
			if err != nil || len(msgs) != 1 || msgs[0].Status != store.MessageComplete || msgs[0].Text != "all done" {
				t.Fatalf("messages %+v, %v", msgs, err)
			}
			got, _ := ts.Dialogs().Get(ctx, d2.ID)
			if got.State != `{"turn":1}` {
				t.Fatalf("dialog %+v", got)
			}
			if _, err := ts.Leases().Get(ctx, d2.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("the lease is still there: %v", err)
			}
		})
		t.Run("a save naming another tenant's reply is not found", func(t *testing.T) {
			other := mustTenant(t, st, "other")
			theirs := mustAppend(t, st, mustDialog(t, st, mustBot(t, st, other.ID, "support")), "assistant", store.MessageStreaming)
			if ok, err := ts.Leases().Acquire(ctx, d2.ID, "p2", time.Now(), time.Minute); !ok || err != nil {
				t.Fatalf("lease %v, %v", ok, err)
			}
			_, err := ts.Dialogs().SaveRun(ctx, store.Save{TenantID: tn.ID, DialogID: d2.ID, Status: store.DialogActive, State: "{}",
				ReplyID: theirs.ID, Reply: store.MessageUpdate{Content: `[]`, Text: "stolen", Meta: "{}", Status: store.MessageComplete},
				Owner: "p2"})
			wantErr(t, err, store.ErrNotFound)
			msgs, _ := st.Tenant(other.ID).Messages().List(ctx, theirs.DialogID, 0)
			if len(msgs) != 1 || msgs[0].Status != store.MessageStreaming || msgs[0].Text == "stolen" {
				t.Fatalf("their reply %+v", msgs)
			}
		})
	})
}

func TestMessages(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		ts := st.Tenant(tn.ID)
		bot := mustBot(t, st, tn.ID, "support")
		d, other := mustDialog(t, st, bot), mustDialog(t, st, bot)

		t.Run("messages are numbered from 1 per dialog", func(t *testing.T) {
			for want := int64(1); want <= 3; want++ {
				if m := mustAppend(t, st, d, "user", ""); m.Seq != want || m.Status != store.MessageComplete {
					t.Fatalf("seq %d status %s, want %d complete", m.Seq, m.Status, want)
				}
			}
			if m := mustAppend(t, st, other, "user", ""); m.Seq != 1 {
				t.Fatalf("the other dialog's first seq is %d", m.Seq)
			}
		})
		t.Run("concurrent appends get distinct consecutive seqs", func(t *testing.T) {
			var wg sync.WaitGroup
			errs := make([]error, 8)
			for i := range errs {
				wg.Go(func() {
					errs[i] = ts.Messages().Append(ctx, &store.Message{TenantID: tn.ID, DialogID: other.ID, Kind: "user", Role: "user"})
				})
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			rows, err := ts.Messages().List(ctx, other.ID, 0)
			if err != nil || len(rows) != 9 {
				t.Fatalf("%d rows, %v", len(rows), err)
			}
			for i, m := range rows {
				if m.Seq != int64(i+1) {
					t.Fatalf("row %d has seq %d", i, m.Seq)
				}
			}
		})
		t.Run("a crash leaves a streaming reply that MarkInterrupted flags", func(t *testing.T) {
			reply := mustAppend(t, st, d, "assistant", store.MessageStreaming)
			n, err := ts.Messages().MarkInterrupted(ctx, d.ID)
			if err != nil || n != 1 {
				t.Fatalf("marked %d, %v", n, err)
			}
			rows, _ := ts.Messages().List(ctx, d.ID, reply.Seq-1)
			if len(rows) != 1 || rows[0].Status != store.MessageInterrupted {
				t.Fatalf("rows %+v", rows)
			}
			if n, _ := ts.Messages().MarkInterrupted(ctx, d.ID); n != 0 {
				t.Fatalf("marked %d again", n)
			}
		})
		t.Run("a streaming reply is completed in place", func(t *testing.T) {
			reply := mustAppend(t, st, d, "assistant", store.MessageStreaming)
			err := ts.Messages().Update(ctx, reply.ID, store.MessageUpdate{Content: `[{"type":"text","text":"hi"}]`,
				Text: "hi", Model: "m", Provider: "p", Meta: "{}", Status: store.MessageComplete, Turn: 1, InputTokens: 5, OutputTokens: 2})
			if err != nil {
				t.Fatal(err)
			}
			rows, _ := ts.Messages().List(ctx, d.ID, reply.Seq-1)
			if len(rows) != 1 || rows[0].Text != "hi" || rows[0].Status != store.MessageComplete || rows[0].OutputTokens != 2 {
				t.Fatalf("rows %+v", rows)
			}
		})
		t.Run("a tool call is announced then given its result", func(t *testing.T) {
			call := &store.ToolCall{TenantID: tn.ID, DialogID: d.ID, CallID: "c1", MessageID: "msg_x", Name: "lookup",
				Arguments: `{"q":1}`, Status: store.ToolCallPending}
			if err := st.Tenant(call.TenantID).Messages().PutToolCall(ctx, call); err != nil {
				t.Fatal(err)
			}
			res := &store.ToolCall{TenantID: tn.ID, DialogID: d.ID, CallID: "c1", Result: "ok", IsError: true, Status: store.ToolCallDone, DurationMS: 12}
			if err := st.Tenant(res.TenantID).Messages().PutToolCall(ctx, res); err != nil {
				t.Fatal(err)
			}
			rows, err := ts.Messages().ToolCalls(ctx, d.ID)
			if err != nil || len(rows) != 1 || rows[0].MessageID != "msg_x" || rows[0].Result != "ok" || !rows[0].IsError || rows[0].DurationMS != 12 {
				t.Fatalf("rows %+v, %v", rows, err)
			}
		})
		t.Run("a result for a call never announced is not found", func(t *testing.T) {
			err := ts.Messages().PutToolCall(ctx, &store.ToolCall{TenantID: tn.ID, DialogID: d.ID, CallID: "ghost", Status: store.ToolCallDone})
			wantErr(t, err, store.ErrNotFound)
		})
	})
}

func TestDialogScoping(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		a, b := mustTenant(t, st, "tenant-a"), mustTenant(t, st, "tenant-b")
		asB := st.Tenant(b.ID)
		d := mustDialog(t, st, mustBot(t, st, a.ID, "support"))
		msg := mustAppend(t, st, d, "user", "")
		cases := []struct {
			name string
			call func() error
		}{
			{"getting A's dialog", func() error { _, err := asB.Dialogs().Get(ctx, d.ID); return err }},
			{"closing A's dialog", func() error { return asB.Dialogs().SetStatus(ctx, d.ID, store.DialogClosed) }},
			{"saving A's dialog state", func() error { return asB.Dialogs().SaveState(ctx, d.ID, store.DialogPaused, "{}") }},
			{"appending to A's dialog", func() error {
				return asB.Messages().Append(ctx, &store.Message{TenantID: b.ID, DialogID: d.ID, Kind: "user", Role: "user"})
			}},
			{"rewriting A's message", func() error {
				return asB.Messages().Update(ctx, msg.ID, store.MessageUpdate{Text: "stolen", Status: "complete"})
			}},
		}
		for _, tc := range cases {
			t.Run(tc.name+" as tenant B is not found", func(t *testing.T) { wantErr(t, tc.call(), store.ErrNotFound) })
		}
		t.Run("tenant B sees no dialogs, messages or tool calls of A", func(t *testing.T) {
			ds, _, _ := asB.Dialogs().List(ctx, store.DialogFilter{}, store.Page{})
			ms, _ := asB.Messages().List(ctx, d.ID, 0)
			tc, _ := asB.Messages().ToolCalls(ctx, d.ID)
			if len(ds)+len(ms)+len(tc) != 0 {
				t.Fatalf("dialogs %v messages %v calls %v", ds, ms, tc)
			}
		})
		t.Run("tenant B cannot take A's dialog lease", func(t *testing.T) {
			if ok, err := st.Tenant(a.ID).Leases().Acquire(ctx, d.ID, "a-proc", now(), minute); !ok || err != nil {
				t.Fatalf("A's own acquire: %v, %v", ok, err)
			}
			ok, err := asB.Leases().Acquire(ctx, d.ID, "a-proc", now().Add(2*minute), minute)
			if ok || err != nil {
				t.Fatalf("B's acquire of an expired lease: %v, %v", ok, err)
			}
		})
	})
}

func TestDequeueMessage(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		d := mustDialog(t, st, mustBot(t, st, tn.ID, "support"))
		t.Run("a queued message that is still last keeps its seq", func(t *testing.T) {
			q := mustAppend(t, st, d, "user", store.MessageQueued)
			got, err := st.Tenant(tn.ID).Messages().Dequeue(ctx, d.ID, q.ID)
			if err != nil || got.Seq != q.Seq || got.Status != store.MessageComplete {
				t.Fatalf("dequeued %+v, %v", got, err)
			}
		})
		t.Run("a queued message overtaken by others moves to the end", func(t *testing.T) {
			q := mustAppend(t, st, d, "user", store.MessageQueued)
			later := mustAppend(t, st, d, "assistant", "")
			got, err := st.Tenant(tn.ID).Messages().Dequeue(ctx, d.ID, q.ID)
			if err != nil || got.Seq <= later.Seq {
				t.Fatalf("dequeued %+v after %d, %v", got, later.Seq, err)
			}
		})
		t.Run("a message stored complete in advance and overtaken by others moves to the end", func(t *testing.T) {
			m := mustAppend(t, st, d, "user", "")
			later := mustAppend(t, st, d, "tool_result", "")
			got, err := st.Tenant(tn.ID).Messages().Dequeue(ctx, d.ID, m.ID)
			if err != nil || got.Seq <= later.Seq || got.Status != store.MessageComplete {
				t.Fatalf("dequeued %+v after %d, %v", got, later.Seq, err)
			}
		})
		t.Run("a streaming reply cannot be dequeued", func(t *testing.T) {
			m := mustAppend(t, st, d, "assistant", store.MessageStreaming)
			_, err := st.Tenant(tn.ID).Messages().Dequeue(ctx, d.ID, m.ID)
			wantErr(t, err, store.ErrNotFound)
		})
	})
}
