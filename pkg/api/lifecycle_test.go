package api_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// story is the reply a stop lands in while it streams.
const story = "Once upon a time a parcel left the warehouse, crossed three countries, " +
	"missed two trains, befriended a pigeon and finally arrived at the customer's door, slightly dented but proud."

// enqueueSlowStory scripts the model's next reply as story, which stops
// after its first words and waits until the call is given up: the stop
// lands mid-reply however long it takes to arrive (under CI's load, a
// reply streamed at a chunk every 40 ms sometimes ended first).
func (e *chatEnv) enqueueSlowStory() {
	e.llm.Enqueue(llmtest.ServerReply{Text: story, Fault: &llmtest.Fault{HoldAfterChunks: 3}})
}

// streamUntilText posts text as an SSE turn on srv and returns the open
// stream once its first text_delta arrived, with the events read so far.
func streamUntilText(t *testing.T, srv *env, key, dialogID, text string) (*bufio.Reader, string, func()) {
	t.Helper()
	req, err := http.NewRequest("POST", srv.srv.URL+"/v1/tenants/shop/dialogs/"+dialogID+"/messages",
		strings.NewReader(`{"text":"`+text+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := srv.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream: %d %s", resp.StatusCode, b)
	}
	br := bufio.NewReader(resp.Body)
	var seen strings.Builder
	for !strings.Contains(seen.String(), "event: text_delta") {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended before any text: %v\n%s", err, seen.String())
		}
		seen.WriteString(line)
	}
	return br, seen.String(), func() { resp.Body.Close() }
}

// finishStream reads the rest of a stream and parses all of it.
func finishStream(t *testing.T, br *bufio.Reader, seen string) []sseEvent {
	t.Helper()
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	return readSSE(t, seen+string(rest))
}

// assertCanceledReply checks that the stream ended with a done event
// saying canceled, carrying the text streamed so far, and that the dialog
// kept that text as a canceled reply.
func assertCanceledReply(t *testing.T, e *chatEnv, dialogID string, evs []sseEvent) {
	t.Helper()
	last := evs[len(evs)-1]
	if last.typ != "done" || last.data["stop_reason"] != "canceled" {
		t.Fatalf("the stream ends with %s %v, want done with stop_reason canceled; events: %s", last.typ, last.data, types(evs))
	}
	partial, _ := last.data["text"].(string)
	if partial == "" || partial == story || !strings.HasPrefix(story, partial) {
		t.Fatalf("done text %q is not a proper start of the reply", partial)
	}
	got, err := e.client(e.key).GetDialog(context.Background(), "shop", dialogID)
	if err != nil {
		t.Fatal(err)
	}
	var kept *apiclient.Message
	for i := range got.Messages {
		if got.Messages[i].Role == "assistant" {
			kept = &got.Messages[i]
		}
	}
	if kept == nil || kept.Status != store.MessageCanceled || kept.Text != partial {
		t.Fatalf("the dialog keeps %+v, want the reply so far (%q) with status canceled", kept, partial)
	}
	if got.Status != dialog.DialogActive {
		t.Fatalf("dialog status %q after a stop, want active", got.Status)
	}
}

func TestCancelStopsTheRunningReplyAndTheDialogGoesOn(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		ctx := context.Background()
		d := e.dialog(t)
		shop := e.client(e.key)

		t.Run("nothing runs: a cancel does nothing and says so", func(t *testing.T) {
			got, err := shop.CancelReply(ctx, "shop", d)
			if err != nil || got.Canceled {
				t.Fatalf("cancel of an idle dialog: %+v %v, want canceled false", got, err)
			}
		})

		e.enqueueSlowStory()
		br, seen, done := streamUntilText(t, e.env, e.key, d, "tell me a story")
		defer done()
		got, err := shop.CancelReply(ctx, "shop", d)
		if err != nil || !got.Canceled {
			t.Fatalf("cancel mid-stream: %+v %v, want canceled true", got, err)
		}
		assertCanceledReply(t, e, d, finishStream(t, br, seen))

		e.llm.Enqueue(llmtest.ServerReply{Text: "Happy to help with anything else."})
		turn, err := shop.SendMessage(ctx, "shop", d, "thanks, that's enough")
		if err != nil || turn.Done == nil || turn.Done.StopReason != "completed" || turn.Done.Text != "Happy to help with anything else." {
			t.Fatalf("the message after a stop: %+v %v, want it answered", turn, err)
		}
		if e.llm.Pending() != 0 {
			t.Fatalf("%d scripted replies left", e.llm.Pending())
		}

		t.Run("another tenant's dialog is not found", func(t *testing.T) {
			other := e.mustCreateTenant(t, "other")
			r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/cancel", other, `{}`)
			if r.StatusCode != http.StatusNotFound {
				t.Fatalf("cancel with another tenant's key: %d %s", r.StatusCode, r.body)
			}
		})
	})
}

func TestCancelReachesTheServerThatRunsTheReply(t *testing.T) {
	t.Parallel()
	u := os.Getenv(storetest.EnvDatabaseURL)
	if u == "" {
		t.Skip("set " + storetest.EnvDatabaseURL + " to run this test against PostgreSQL")
	}
	st, other := storetest.OpenPostgresTwice(t, u)
	e := newChatEnv(t, st, dialog.Limits{})
	second, _ := e.serve(t, other)
	d := e.dialog(t)

	e.enqueueSlowStory()
	br, seen, done := streamUntilText(t, e.env, e.key, d, "tell me a story")
	defer done()
	got, err := second.client(e.key).CancelReply(context.Background(), "shop", d)
	if err != nil || !got.Canceled {
		t.Fatalf("cancel on the other server: %+v %v, want canceled true", got, err)
	}
	assertCanceledReply(t, e, d, finishStream(t, br, seen))
}

func TestCloseDialog(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		ctx := context.Background()
		shop := e.client(e.key)
		d, open := e.dialog(t), e.dialog(t)

		for _, tc := range []struct{ name, body, pointer string }{
			{"a missing reason", `{}`, "/reason"},
			{"a blank reason", `{"reason": "  "}`, "/reason"},
			{"an overlong reason", `{"reason": "` + strings.Repeat("x", 501) + `"}`, "/reason"},
		} {
			t.Run("refuses "+tc.name, func(t *testing.T) {
				r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/close", e.key, tc.body)
				if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, tc.pointer) {
					t.Fatalf("%d %s, want 422 at %s", r.StatusCode, r.body, tc.pointer)
				}
			})
		}

		closed, err := shop.CloseDialog(ctx, "shop", d, "solved on the phone")
		if err != nil || closed.Status != dialog.DialogClosed || closed.ClosedReason != "solved on the phone" {
			t.Fatalf("close: %+v %v", closed, err)
		}
		t.Run("a closed dialog takes no messages and says so", func(t *testing.T) {
			_, err := shop.SendMessage(ctx, "shop", d, "one more thing")
			assertAPIError(t, err, http.StatusConflict, apiclient.CodeDialogClosed)
			r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text":"hello?"}`, "Accept", "text/event-stream")
			if r.StatusCode != http.StatusConflict || !strings.Contains(r.body, apiclient.CodeDialogClosed) {
				t.Fatalf("stream to a closed dialog: %d %s", r.StatusCode, r.body)
			}
		})
		t.Run("closing it again is a conflict", func(t *testing.T) {
			_, err := shop.CloseDialog(ctx, "shop", d, "again")
			assertAPIError(t, err, http.StatusConflict, apiclient.CodeDialogClosed)
		})
		t.Run("the list filters closed dialogs", func(t *testing.T) {
			list, err := shop.ListDialogs(ctx, "shop", "", dialog.DialogClosed, "")
			if err != nil || len(list.Dialogs) != 1 || list.Dialogs[0].ID != d || list.Dialogs[0].ClosedReason != "solved on the phone" {
				t.Fatalf("closed dialogs: %+v %v, want only %s", list, err, d)
			}
		})
		t.Run("the open dialog still chats", func(t *testing.T) {
			e.llm.Enqueue(llmtest.ServerReply{Text: "Hello!"})
			if turn, err := shop.SendMessage(ctx, "shop", open, "hi"); err != nil || turn.Done.Text != "Hello!" {
				t.Fatalf("%+v %v", turn, err)
			}
		})
		t.Run("another tenant's dialog is not found", func(t *testing.T) {
			other := e.mustCreateTenant(t, "other")
			r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+open+"/close", other, `{"reason":"x"}`)
			if r.StatusCode != http.StatusNotFound {
				t.Fatalf("close with another tenant's key: %d %s", r.StatusCode, r.body)
			}
		})
	})
}

func TestEndDialogToolClosesTheDialog(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		ctx := context.Background()
		op := platform.Operator()
		cfg := `{"basic_settings": {"name": "Closer"}, "native_tools": ["end_dialog"], "llm": {"model": "gpt-4o-mini"}}`
		if _, _, err := e.svc.Bots().Create(ctx, op, "shop", "closer", []byte(cfg)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Versions().Publish(ctx, op, "shop", "closer", 1); err != nil {
			t.Fatal(err)
		}
		d := e.dialogWith(t, "closer")
		shop := e.client(e.key)
		e.llm.Enqueue(llmtest.ServerReply{Text: "Glad I could help, goodbye!",
			ToolCalls: []llmtest.ServerCall{{ID: "c1", Name: "end_dialog", Arguments: `{"reason":"the customer is satisfied"}`}}})
		if _, err := shop.SendMessage(ctx, "shop", d, "that's all, thanks"); err != nil {
			t.Fatal(err)
		}
		got, err := shop.GetDialog(ctx, "shop", d)
		if err != nil || got.Status != dialog.DialogClosed || got.ClosedReason != "the customer is satisfied" {
			t.Fatalf("after end_dialog: status %q reason %q (%v), want closed with the model's reason", got.Status, got.ClosedReason, err)
		}
		_, err = shop.SendMessage(ctx, "shop", d, "wait, one more thing")
		assertAPIError(t, err, http.StatusConflict, apiclient.CodeDialogClosed)
	})
}

func assertAPIError(t *testing.T, err error, status int, code string) {
	t.Helper()
	var ae *apiclient.Error
	if !errors.As(err, &ae) || ae.Code != code || ae.Status != status {
		t.Fatalf("got %v, want a %d %s error", err, status, code)
	}
}

func TestClosingADialogStopsItsReplyAndItStaysClosed(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		ctx := context.Background()
		d := e.dialog(t)
		shop := e.client(e.key)
		e.enqueueSlowStory()
		br, seen, done := streamUntilText(t, e.env, e.key, d, "tell me a story")
		defer done()
		if _, err := shop.CloseDialog(ctx, "shop", d, "the customer left"); err != nil {
			t.Fatal(err)
		}
		evs := finishStream(t, br, seen)
		if last := evs[len(evs)-1]; last.typ != "done" || last.data["stop_reason"] != "canceled" {
			t.Fatalf("the stream ends with %s %v, want done canceled", last.typ, last.data)
		}
		// The run's last save came after the close: it must not reopen it.
		got, err := shop.GetDialog(ctx, "shop", d)
		if err != nil || got.Status != dialog.DialogClosed || got.ClosedReason != "the customer left" {
			t.Fatalf("after the run ended: status %q reason %q (%v), want closed", got.Status, got.ClosedReason, err)
		}
	})
}
