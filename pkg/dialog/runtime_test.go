package dialog_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/store"
)

func TestATwoToolTurnIsStreamedStoredAndMetered(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		d := e.dialog(t)
		e.llm.Enqueue(
			llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{
				{ID: "c1", Name: "lookup_order", Arguments: `{"order":"A7"}`},
				{ID: "c2", Name: "check_stock", Arguments: `{"item":"tent"}`}}},
			llmtest.ServerReply{Text: "Order A7 shipped; tents are in stock."},
		)
		sink := &events{}
		turn, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "Where is A7, and any tents?"}, sink)
		if err != nil {
			t.Fatal(err)
		}
		t.Run("events arrive in order with the server's dialog and message events", func(t *testing.T) {
			want := "dialog message turn_start message tool_call tool_call message tool_result message tool_result turn_end " +
				"turn_start text_delta… message turn_end done"
			if got := sink.types(); got != want {
				t.Fatalf("events:\n got %s\nwant %s", got, want)
			}
		})
		t.Run("the turn lists the new messages and ends with done", func(t *testing.T) {
			kinds := []string{}
			for _, m := range turn.Messages {
				kinds = append(kinds, m.Kind)
			}
			if !slices.Equal(kinds, []string{"user", "assistant", "tool_result", "tool_result", "assistant"}) {
				t.Fatalf("kinds %v", kinds)
			}
			if turn.Done == nil || turn.Done.StopReason != agent.StopCompleted || turn.Done.Text != "Order A7 shipped; tents are in stock." {
				t.Fatalf("done %+v", turn.Done)
			}
		})
		t.Run("every message is stored complete, replies with the version that made them", func(t *testing.T) {
			got, _ := e.rt.Dialogs().Get(ctx, e.admin, "shop", d.ID, "")
			if len(got.Messages) != 5 {
				t.Fatalf("%d messages", len(got.Messages))
			}
			for i, m := range got.Messages {
				if m.Status != store.MessageComplete || m.Seq != int64(i+1) {
					t.Fatalf("message %d: %+v", i, m)
				}
				if m.Kind == "assistant" && (m.Version != 1 || m.Model != "gpt-4o-mini" || m.Provider != "openai") {
					t.Fatalf("reply %+v", m)
				}
			}
			if len(got.ToolCalls) != 2 || got.ToolCalls[0].Status != store.ToolCallDone || !strings.Contains(got.ToolCalls[0].Result, "/orders/A7") {
				t.Fatalf("tool calls %+v", got.ToolCalls)
			}
		})
		t.Run("the tools got the secret and context, which never reach events or messages", func(t *testing.T) {
			reqs := e.shopSeen.all()
			if !slices.Contains(reqs, "GET /orders/A7 auth=Bearer "+shopSecret+" tier=gold") {
				t.Fatalf("shop saw %q", reqs)
			}
			if strings.Contains(sink.json(t), shopSecret) {
				t.Fatal("an event holds the secret")
			}
			got, _ := e.rt.Dialogs().Get(ctx, e.admin, "shop", d.ID, "")
			for _, m := range got.Messages {
				if strings.Contains(string(m.Content), shopSecret) {
					t.Fatalf("message %s holds the secret", m.ID)
				}
			}
		})
		t.Run("the context reached the prompt", func(t *testing.T) {
			if !strings.Contains(e.llm.LastRequest().System(), "gold") {
				t.Fatal("the system prompt lacks the exposed context value")
			}
		})
		t.Run("usage is metered per day, bot and key", func(t *testing.T) {
			rows, err := e.rt.Metering().Summary(ctx, e.admin, "shop", platform.UsageQuery{GroupBy: "key"})
			if err != nil || len(rows) != 1 || rows[0].Group != e.admin.KeyID || rows[0].Turns != 2 || rows[0].ToolCalls != 2 || rows[0].InputTokens == 0 {
				t.Fatalf("usage %+v, %v", rows, err)
			}
			if rows[0].CostMicroUSD == 0 {
				t.Fatal("gpt-4o-mini usage cost nothing")
			}
		})
	})
}

func TestTheUserMessageIsStoredWhenTheModelFails(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		d := e.dialog(t)
		e.llm.Enqueue(llmtest.QuotaExhausted())
		turn, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "hello?"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if turn.Done == nil || turn.Done.StopReason != agent.StopError || turn.Error == nil || turn.Error.Code != "llm_quota" {
			t.Fatalf("turn %+v", turn)
		}
		want := []string{"user:complete:hello?", "system_event:complete:run failed: the language model's usage limit is reached"}
		if got := e.history(t, d.ID); !slices.Equal(got, want) {
			t.Fatalf("history %q", got)
		}
		t.Run("and the next message works", func(t *testing.T) {
			e.llm.Enqueue(llmtest.ServerReply{Text: "Hi there."})
			turn, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "hello again"}, nil)
			if err != nil || turn.Done.Text != "Hi there." {
				t.Fatalf("turn %+v, %v", turn, err)
			}
		})
	})
}

func TestPausedDialogsResume(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		t.Run("a client tool pauses the dialog until its result is submitted", func(t *testing.T) {
			d := e.dialog(t)
			e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "geo1", Name: "locate", Arguments: `{}`}}},
				llmtest.ServerReply{Text: "You are in Bergen."})
			sink := &events{}
			turn, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "where am I?"}, sink)
			if err != nil || turn.Done.StopReason != agent.StopPaused || len(turn.Pending) != 1 || turn.Pending[0].Kind != "client" {
				t.Fatalf("turn %+v, %v", turn, err)
			}
			if !strings.Contains(sink.types(), "client_tool_request") {
				t.Fatalf("events %s", sink.types())
			}
			got, _ := e.rt.Dialogs().Get(ctx, e.admin, "shop", d.ID, "")
			if got.Status != dialog.DialogPaused || len(got.Pending) != 1 {
				t.Fatalf("dialog %+v", got.Dialog)
			}
			_, err = e.rt.SubmitToolResults(ctx, e.admin, "shop", d.ID, dialog.ToolResultsInput{Results: []agent.ClientResult{{ID: "nope", Content: "x"}}}, nil)
			wantInvalid(t, err, "/results/0/id")
			turn, err = e.rt.SubmitToolResults(ctx, e.admin, "shop", d.ID, dialog.ToolResultsInput{Results: []agent.ClientResult{{ID: "geo1", Content: `{"city":"Bergen"}`}}}, nil)
			if err != nil || turn.Done.Text != "You are in Bergen." {
				t.Fatalf("resumed %+v, %v", turn, err)
			}
			got, _ = e.rt.Dialogs().Get(ctx, e.admin, "shop", d.ID, "")
			if got.Status != dialog.DialogActive || len(got.Pending) != 0 {
				t.Fatalf("dialog after resume %+v", got.Dialog)
			}
		})
		t.Run("a declined confirmation never calls the tool", func(t *testing.T) {
			d := e.dialog(t)
			e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "x1", Name: "cancel_order", Arguments: `{"order":"B2"}`}}},
				llmtest.ServerReply{Text: "Kept your order."})
			turn, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "cancel B2"}, nil)
			if err != nil || len(turn.Pending) != 1 || turn.Pending[0].Kind != "confirmation" {
				t.Fatalf("turn %+v, %v", turn, err)
			}
			turn, err = e.rt.Confirm(ctx, e.admin, "shop", d.ID, "", "x1", false, nil)
			if err != nil || turn.Done.Text != "Kept your order." {
				t.Fatalf("confirmed %+v, %v", turn, err)
			}
			for _, r := range e.shopSeen.all() {
				if strings.Contains(r, "/cancel") {
					t.Fatalf("the declined call ran: %s", r)
				}
			}
		})
		t.Run("an approved confirmation runs the tool", func(t *testing.T) {
			d := e.dialog(t)
			e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "x2", Name: "cancel_order", Arguments: `{"order":"C3"}`}}},
				llmtest.ServerReply{Text: "Cancelled."})
			if _, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "cancel C3"}, nil); err != nil {
				t.Fatal(err)
			}
			turn, err := e.rt.Confirm(ctx, e.admin, "shop", d.ID, "", "x2", true, nil)
			if err != nil || turn.Done.Text != "Cancelled." || !slices.ContainsFunc(e.shopSeen.all(), func(r string) bool { return strings.HasPrefix(r, "POST /orders/C3/cancel") }) {
				t.Fatalf("confirmed %+v, %v, shop %q", turn, err, e.shopSeen.all())
			}
		})
		t.Run("resuming a dialog that waits for nothing is a conflict", func(t *testing.T) {
			d := e.dialog(t)
			_, err := e.rt.Confirm(ctx, e.admin, "shop", d.ID, "", "x", true, nil)
			wantCode(t, err, platform.CodeConflict)
		})
	})
}

func TestHandoffStopsTheBot(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		d := e.dialog(t)
		e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "h1", Name: "handoff_to_human", Arguments: `{"reason":"asked for a person"}`}}},
			llmtest.ServerReply{Text: "A person will follow up."})
		turn, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "a human please"}, nil)
		if err != nil || turn.Done.StopReason != agent.StopHandoff {
			t.Fatalf("turn %+v, %v", turn, err)
		}
		requests := len(e.llm.Requests())
		sink := &events{}
		turn, err = e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "hello? anyone?"}, sink)
		if err != nil || turn.Done.StopReason != agent.StopHandoff || len(turn.Messages) != 1 {
			t.Fatalf("turn after handoff %+v, %v", turn, err)
		}
		if len(e.llm.Requests()) != requests {
			t.Fatal("the bot was asked after the handoff")
		}
		if got := sink.types(); got != "dialog message done" {
			t.Fatalf("events %s", got)
		}
		h := e.history(t, d.ID)
		if h[len(h)-1] != "user:complete:hello? anyone?" {
			t.Fatalf("history %q", h)
		}
		got, _ := e.rt.Dialogs().Get(ctx, e.admin, "shop", d.ID, "")
		if got.Status != dialog.DialogHandoff {
			t.Fatalf("status %s", got.Status)
		}
	})
}

// TestDoneComesOnceTheDialogIsSaved: a caller told by done that the bot
// handed off (a widget, which then follows the dialog) reads the dialog
// handed off already, never still active.
func TestDoneComesOnceTheDialogIsSaved(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		d := e.dialog(t)
		e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "h1", Name: "handoff_to_human", Arguments: `{"reason":"asked for a person"}`}}})
		var seen []string
		sink := agent.SinkFunc(func(ev agent.Event) {
			if _, ok := ev.(agent.Done); !ok {
				return
			}
			got, err := e.rt.Dialogs().Get(ctx, e.admin, "shop", d.ID, "")
			seen = append(seen, fmt.Sprint(got.Status, err))
		})
		if _, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "a human please"}, sink); err != nil {
			t.Fatal(err)
		}
		if want := []string{dialog.DialogHandoff + "<nil>"}; !slices.Equal(seen, want) {
			t.Fatalf("when done came the dialog read %q; want %q", seen, want)
		}
	})
}

func TestLimits(t *testing.T) {
	t.Parallel()
	t.Run("a key over its rate is rate limited with a retry time", func(t *testing.T) {
		forEachRuntime(t, dialog.Limits{KeyRate: 0.001, KeyBurst: 1}, func(t *testing.T, e *rtEnv) {
			d := e.dialog(t)
			e.llm.Enqueue(llmtest.ServerReply{Text: "one"})
			if _, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "1"}, nil); err != nil {
				t.Fatal(err)
			}
			_, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "2"}, nil)
			wantCode(t, err, platform.CodeRateLimited)
			if ra := dialog.RetryAfter(err); ra < time.Second {
				t.Fatalf("retry after %s", ra)
			}
			if h := e.history(t, d.ID); len(h) != 2 {
				t.Fatalf("a refused message was stored: %q", h)
			}
		})
	})
	t.Run("a tenant over its daily tokens is rate limited until midnight", func(t *testing.T) {
		forEachRuntime(t, dialog.Limits{DailyTokens: 10}, func(t *testing.T, e *rtEnv) {
			d := e.dialog(t)
			e.llm.Enqueue(llmtest.ServerReply{Text: "one"})
			if _, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "1"}, nil); err != nil {
				t.Fatal(err)
			}
			_, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "2"}, nil)
			wantCode(t, err, platform.CodeRateLimited)
			if ra := dialog.RetryAfter(err); ra <= 0 || ra > 24*time.Hour {
				t.Fatalf("retry after %s", ra)
			}
		})
	})
	t.Run("a run that crosses the quota stops with quota", func(t *testing.T) {
		forEachRuntime(t, dialog.Limits{DailyTokens: 10}, func(t *testing.T, e *rtEnv) {
			d := e.dialog(t)
			e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "c1", Name: "check_stock", Arguments: `{"item":"tent"}`}}})
			turn, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "stock?"}, nil)
			if err != nil || turn.Done.StopReason != agent.StopQuota {
				t.Fatalf("turn %+v, %v", turn, err)
			}
			if len(e.shopSeen.all()) != 0 {
				t.Fatal("a tool ran after the quota was spent")
			}
		})
	})
}

func TestAServerWithoutAModelStoresTheMessageAndSaysSo(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		rt := e.runtime(t, dialog.Options{})
		_, admin := e.tenantWithKey(t, "shop")
		platformtest.Bot(t, e.svc, admin, "shop", "helper")
		if _, err := e.svc.Versions().Publish(ctx, admin, "shop", "helper", 1); err != nil {
			t.Fatal(err)
		}
		d, err := rt.Dialogs().Create(ctx, admin, "shop", "helper", dialog.CreateDialogInput{})
		if err != nil {
			t.Fatal(err)
		}
		turn, err := rt.SendMessage(ctx, admin, "shop", d.ID, dialog.SendInput{Text: "hello"}, nil)
		if err != nil || turn.Error == nil || turn.Error.Code != "provider_unavailable" || len(turn.Messages) != 2 ||
			turn.Messages[0].Text != "hello" || turn.Messages[1].Text != "run failed: no language model is available" {
			t.Fatalf("turn %+v, %v", turn, err)
		}
	})
}

func TestNotesSurviveBetweenMessages(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		d := e.dialog(t)
		e.llm.Enqueue(
			llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "r1", Name: "remember", Arguments: `{"key":"order","value":"A7"}`}}},
			llmtest.ServerReply{Text: "Noted."},
			llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "r2", Name: "recall", Arguments: `{"key":"order"}`}}},
			llmtest.ServerReply{Text: "Your order is A7."},
		)
		if _, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "my order is A7"}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "what was my order?"}, nil); err != nil {
			t.Fatal(err)
		}
		got, _ := e.rt.Dialogs().Get(ctx, e.admin, "shop", d.ID, "")
		var recalled string
		for _, c := range got.ToolCalls {
			if c.ID == "r2" {
				recalled = c.Result
			}
		}
		if recalled != "A7" {
			t.Fatalf("recall in a later request returned %q", recalled)
		}
	})
}

// TestMeteredUsageIsWritten: usage reaches the database without anyone
// asking for it (other processes read it there), and what is still in
// memory is written when the runtime shuts down.
func TestMeteredUsageIsWritten(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		turns := func() int64 {
			t.Helper()
			rows, err := e.svc.Usage().Summary(ctx, e.admin, "shop", platform.UsageQuery{})
			if err != nil {
				t.Fatal(err)
			}
			var n int64
			for _, r := range rows {
				n += r.Turns
			}
			return n
		}
		d := e.dialog(t)
		e.llm.Enqueue(llmtest.ServerReply{Text: "one"}, llmtest.ServerReply{Text: "two"})
		if _, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "first"}, nil); err != nil {
			t.Fatal(err)
		}
		t.Run("in the background, within seconds", func(t *testing.T) {
			for deadline := time.Now().Add(10 * time.Second); turns() != 1; time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the turn's usage was not written")
				}
			}
		})
		t.Run("at shutdown", func(t *testing.T) {
			if _, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "second"}, nil); err != nil {
				t.Fatal(err)
			}
			if err := e.rt.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			if got := turns(); got != 2 {
				t.Fatalf("%d turns written, want 2", got)
			}
		})
	})
}
