package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
)

// say appends a complete message of kind with text to d.
func say(t *testing.T, st *store.Store, d *store.Dialog, kind, text string) *store.Message {
	t.Helper()
	m := &store.Message{TenantID: d.TenantID, DialogID: d.ID, Kind: kind, Role: kind, Text: text}
	if err := st.Tenant(m.TenantID).Messages().Append(context.Background(), m); err != nil {
		t.Fatalf("append %q: %v", text, err)
	}
	return m
}

func listed(t *testing.T, st *store.Store, tenantID string, f store.DialogFilter) []store.Dialog {
	t.Helper()
	rows, _, err := st.Tenant(tenantID).Dialogs().List(context.Background(), f, store.Page{})
	if err != nil {
		t.Fatalf("list dialogs %+v: %v", f, err)
	}
	return rows
}

func TestDialogSearch(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn, other := mustTenant(t, st, "acme"), mustTenant(t, st, "globex")
		ts := st.Tenant(tn.ID)
		bot, otherBot := mustBot(t, st, tn.ID, "support"), mustBot(t, st, other.ID, "support")
		refund, shipping, theirs := mustDialog(t, st, bot), mustDialog(t, st, bot), mustDialog(t, st, otherBot)
		say(t, st, refund, "user", "I want a Refund for my broken kettle, please.")
		reply := say(t, st, refund, "assistant", "Sorry to hear that. Refunds take five days.")
		say(t, st, shipping, "user", "Where is my parcel?")
		say(t, st, theirs, "user", "refund kettle")

		t.Run("a word of a message finds its dialog, whatever its case, and only in the tenant", func(t *testing.T) {
			if rows := listed(t, st, tn.ID, store.DialogFilter{Query: "refund"}); !sameIDs(rows, refund.ID) {
				t.Fatalf("refund finds %+v", rows)
			}
			if rows := listed(t, st, tn.ID, store.DialogFilter{Query: "KETTLE broken"}); !sameIDs(rows, refund.ID) {
				t.Fatalf("two words find %+v", rows)
			}
			if rows := listed(t, st, tn.ID, store.DialogFilter{Query: "kettle parcel"}); len(rows) != 0 {
				t.Fatalf("words of different dialogs find %+v", rows)
			}
		})
		t.Run("search syntax typed by a user is read as words", func(t *testing.T) {
			for _, q := range []string{`refund OR parcel`, `"refund`, `refund*`, `kettle:`, `NEAR(refund`} {
				if _, _, err := ts.Dialogs().List(ctx, store.DialogFilter{Query: q}, store.Page{}); err != nil {
					t.Errorf("query %q: %v", q, err)
				}
			}
		})
		t.Run("a reply edited later is found by its new words only", func(t *testing.T) {
			u := store.MessageUpdate{Content: "[]", Text: "Your parcel ships tomorrow.", Status: store.MessageComplete, Meta: "{}"}
			m := say(t, st, shipping, "assistant", "thinking")
			if err := ts.Messages().Update(ctx, m.ID, u); err != nil {
				t.Fatal(err)
			}
			if rows := listed(t, st, tn.ID, store.DialogFilter{Query: "tomorrow"}); !sameIDs(rows, shipping.ID) {
				t.Fatalf("tomorrow finds %+v", rows)
			}
			if rows := listed(t, st, tn.ID, store.DialogFilter{Query: "thinking"}); len(rows) != 0 {
				t.Fatalf("the old text still finds %+v", rows)
			}
		})
		t.Run("dialogs filter by end user and feedback", func(t *testing.T) {
			anon := &store.Dialog{TenantID: tn.ID, BotID: bot.ID, VersionNumber: 1, UserID: "u2"}
			if err := st.Tenant(anon.TenantID).Dialogs().Create(ctx, anon); err != nil {
				t.Fatal(err)
			}
			if rows := listed(t, st, tn.ID, store.DialogFilter{UserID: "u2"}); !sameIDs(rows, anon.ID) {
				t.Fatalf("u2's dialogs %+v", rows)
			}
			f := &store.Feedback{TenantID: tn.ID, DialogID: refund.ID, MessageID: reply.ID, Rating: store.FeedbackDown, Comment: "slow"}
			if err := st.Tenant(f.TenantID).Feedback().Put(ctx, f); err != nil || f.BotID != bot.ID {
				t.Fatalf("put feedback %+v: %v", f, err)
			}
			for rating, want := range map[string][]string{store.FeedbackDown: {refund.ID}, store.FeedbackUp: nil,
				store.FeedbackAny: {refund.ID}, store.FeedbackNone: {shipping.ID, anon.ID}} {
				if rows := listed(t, st, tn.ID, store.DialogFilter{Feedback: rating}); !sameIDs(rows, want...) {
					t.Errorf("feedback %s: %+v, want %v", rating, rows, want)
				}
			}
		})
		t.Run("a list's summaries count messages, failed tool calls and feedback and show the match", func(t *testing.T) {
			call := &store.ToolCall{TenantID: tn.ID, DialogID: refund.ID, CallID: "c1", MessageID: reply.ID, Name: "lookup",
				Result: "boom", IsError: true, Status: store.ToolCallDone}
			if err := st.Tenant(call.TenantID).Messages().PutToolCall(ctx, call); err != nil {
				t.Fatal(err)
			}
			sums, err := ts.Dialogs().Summarize(ctx, []string{refund.ID, shipping.ID}, "days")
			if err != nil {
				t.Fatal(err)
			}
			r := sums[refund.ID]
			if r.Messages != 2 || r.ToolErrors != 1 || r.FeedbackDown != 1 || r.Snippet != reply.Text {
				t.Errorf("refund summary %+v", r)
			}
			sums, err = ts.Dialogs().Summarize(ctx, []string{refund.ID, shipping.ID}, "")
			if err != nil || sums[shipping.ID].Snippet != "Where is my parcel?" || sums[shipping.ID].ToolErrors != 0 {
				t.Errorf("shipping summary %+v, %v", sums[shipping.ID], err)
			}
		})
		t.Run("a long match is cut around the word", func(t *testing.T) {
			long := strings.Repeat("filler ", 60) + "needle " + strings.Repeat("filler ", 60)
			d := mustDialog(t, st, bot)
			say(t, st, d, "user", long)
			sums, err := ts.Dialogs().Summarize(ctx, []string{d.ID}, "needle")
			if s := sums[d.ID].Snippet; err != nil || !strings.Contains(s, "needle") || !strings.HasPrefix(s, "…") || len([]rune(s)) > 170 {
				t.Errorf("snippet %q, %v", s, err)
			}
		})
		t.Run("feedback only rates a reply of the tenant's own dialog", func(t *testing.T) {
			user := say(t, st, shipping, "user", "hello")
			for name, f := range map[string]*store.Feedback{
				"a user message":            {TenantID: tn.ID, DialogID: shipping.ID, MessageID: user.ID, Rating: store.FeedbackUp},
				"a reply of another dialog": {TenantID: tn.ID, DialogID: shipping.ID, MessageID: reply.ID, Rating: store.FeedbackUp},
				"another tenant's reply":    {TenantID: other.ID, DialogID: refund.ID, MessageID: reply.ID, Rating: store.FeedbackUp},
			} {
				if err := st.Tenant(f.TenantID).Feedback().Put(ctx, f); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("%s: %v", name, err)
				}
			}
		})
		t.Run("rating again replaces the feedback", func(t *testing.T) {
			f := &store.Feedback{TenantID: tn.ID, DialogID: refund.ID, MessageID: reply.ID, Rating: store.FeedbackUp}
			if err := st.Tenant(f.TenantID).Feedback().Put(ctx, f); err != nil {
				t.Fatal(err)
			}
			got, err := ts.Feedback().List(ctx, refund.ID)
			if err != nil || len(got) != 1 || got[0].Rating != store.FeedbackUp || got[0].Comment != "" {
				t.Fatalf("feedback %+v, %v", got, err)
			}
		})
		t.Run("erasing a dialog takes its words out of search and its feedback away", func(t *testing.T) {
			if _, err := ts.Dialogs().Delete(ctx, refund.ID, time.Now()); err != nil {
				t.Fatal(err)
			}
			if rows := listed(t, st, tn.ID, store.DialogFilter{Query: "kettle"}); len(rows) != 0 {
				t.Fatalf("kettle still finds %+v", rows)
			}
			if rows := listed(t, st, other.ID, store.DialogFilter{Query: "kettle"}); !sameIDs(rows, theirs.ID) {
				t.Fatalf("the other tenant's dialog is gone from search: %+v", rows)
			}
			if got, err := ts.Feedback().List(ctx, refund.ID); err != nil || len(got) != 0 {
				t.Fatalf("feedback left %+v, %v", got, err)
			}
			if st.Dialect() == store.DialectSQLite {
				// The FTS5 index keeps words of its own: the erased
				// user's must be gone from it, not merely unreachable.
				var n int64
				if err := st.DB().Raw("SELECT count(*) FROM messages_search WHERE messages_search MATCH 'kettle'").Scan(&n).Error; err != nil || n != 1 {
					t.Fatalf("the search index holds %d entries for kettle (%v); want the other tenant's only", n, err)
				}
			}
		})
	})
}
