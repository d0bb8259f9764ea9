package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// TestTypingAndReadMarksBothWays plays a handoff's presence through the
// API: the visitor's widget (pk_ key) and the operator each see the
// other type, never themselves, and each side's read mark reaches the
// other's stream, is kept (a new stream starts with it) and never moves
// back.
func TestTypingAndReadMarksBothWays(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		ctx := context.Background()
		const origin = "https://shop.example"
		pk, err := e.svc.APIKeys().Create(ctx, platform.Operator(), "shop", platform.APIKeyInput{Name: "site", Kind: "pk", Bot: "helper",
			Origins: []string{origin}})
		if err != nil {
			t.Fatal(err)
		}
		d := e.widgetDialog(t, pk.Key, origin)
		widgetPost := func(route, body string) rawResponse {
			return e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/"+route, pk.Key, body, "Origin", origin)
		}
		t.Run("the visitor's typing outside a handoff reaches nobody", func(t *testing.T) {
			if r := widgetPost("typing", `{}`); r.StatusCode != http.StatusNoContent {
				t.Fatalf("typing: %d %s", r.StatusCode, r.body)
			}
		})
		e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "h1", Name: "handoff_to_human", Arguments: `{"reason":"asks for a person"}`}}})
		if turn, err := e.client(e.key).SendMessage(ctx, "shop", d, "I want to talk to a person"); err != nil || turn.Done.StopReason != "handoff" {
			t.Fatalf("turn %+v, %v", turn, err)
		}
		if _, err := e.client(e.key).Assign(ctx, "shop", d, "Ada"); err != nil {
			t.Fatal(err)
		}
		visitor := e.follow(t, pk.Key, origin, d, 0)
		operator := e.follow(t, e.key, "", d, 0)
		visitor.next(t, "handoff")
		operator.next(t, "handoff")

		t.Run("the operator sees the visitor type", func(t *testing.T) {
			if r := widgetPost("typing", `{}`); r.StatusCode != http.StatusNoContent {
				t.Fatalf("typing: %d %s", r.StatusCode, r.body)
			}
			var got apiclient.TypingEvent
			if err := json.Unmarshal(operator.next(t, "typing").Data, &got); err != nil || got.Who != "user" {
				t.Fatalf("typing event %+v, %v", got, err)
			}
		})
		t.Run("the visitor sees the operator type, by name, and not their own typing", func(t *testing.T) {
			if err := e.client(e.key).Typing(ctx, "shop", d); err != nil {
				t.Fatal(err)
			}
			var got apiclient.TypingEvent
			if err := json.Unmarshal(visitor.next(t, "typing").Data, &got); err != nil || got.Who != "operator" || got.Name != "Ada" {
				t.Fatalf("typing event %+v, %v", got, err)
			}
		})
		reply, err := e.client(e.key).PostOperatorMessage(ctx, "shop", d, "Hello, Ada here.")
		if err != nil {
			t.Fatal(err)
		}
		t.Run("the visitor's read mark reaches the operator", func(t *testing.T) {
			r := widgetPost("read", `{"seq":`+jsonInt(reply.Seq)+`}`)
			var mark apiclient.ReadMark
			if r.StatusCode != http.StatusOK || json.Unmarshal([]byte(r.body), &mark) != nil || mark.Who != "user" || mark.Seq != reply.Seq {
				t.Fatalf("read: %d %s", r.StatusCode, r.body)
			}
			var got apiclient.ReadMark
			if err := json.Unmarshal(operator.next(t, "read").Data, &got); err != nil || got.Who != "user" || got.Seq != reply.Seq {
				t.Fatalf("read event %+v, %v", got, err)
			}
		})
		t.Run("the operator's read mark reaches the visitor", func(t *testing.T) {
			mark, err := e.client(e.key).MarkRead(ctx, "shop", d, reply.Seq)
			if err != nil || mark.Who != "operator" || mark.Seq != reply.Seq {
				t.Fatalf("read %+v, %v", mark, err)
			}
			var got apiclient.ReadMark
			if err := json.Unmarshal(visitor.next(t, "read").Data, &got); err != nil || got.Who != "operator" || got.Seq != reply.Seq {
				t.Fatalf("read event %+v, %v", got, err)
			}
		})
		t.Run("a read mark never moves back, nor past the newest message", func(t *testing.T) {
			if mark, err := e.client(e.key).MarkRead(ctx, "shop", d, 1); err != nil || mark.Seq != reply.Seq {
				t.Fatalf("read back %+v, %v", mark, err)
			}
			if mark, err := e.client(e.key).MarkRead(ctx, "shop", d, reply.Seq+100); err != nil || mark.Seq != reply.Seq {
				t.Fatalf("read ahead %+v, %v", mark, err)
			}
		})
		t.Run("a new stream starts with the other side's read mark", func(t *testing.T) {
			again := e.follow(t, e.key, "", d, reply.Seq)
			var got apiclient.ReadMark
			if err := json.Unmarshal(again.next(t, "read").Data, &got); err != nil || got.Who != "user" || got.Seq != reply.Seq {
				t.Fatalf("read event %+v, %v", got, err)
			}
		})
		t.Run("a read mark names a message", func(t *testing.T) {
			if r := widgetPost("read", `{"seq":0}`); r.StatusCode != http.StatusUnprocessableEntity && r.StatusCode != http.StatusBadRequest {
				t.Fatalf("read 0: %d %s", r.StatusCode, r.body)
			}
		})
		visitor.stop()
		operator.stop()
	})
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestTypingAndReadMarksReachOtherServers follows a handed-off dialog as
// an operator on one server while the end user types and reads through
// another sharing the PostgreSQL database; the following server never
// re-reads on its own, so only the notification can bring them.
func TestTypingAndReadMarksReachOtherServers(t *testing.T) {
	t.Parallel()
	url := os.Getenv("PARLEY_TEST_DATABASE_URL")
	if url == "" {
		t.Skip("set PARLEY_TEST_DATABASE_URL: servers share live signals only through PostgreSQL")
	}
	st1, st2 := storetest.OpenPostgresTwice(t, url)
	e := newChatEnv(t, st1, dialog.Limits{})
	e.liveRecheck = time.Hour
	other, _ := e.serve(t, st2)
	ctx := context.Background()
	chat, err := e.svc.APIKeys().Create(ctx, platform.Operator(), "shop", platform.APIKeyInput{Name: "backend", Scopes: []string{"chat"}})
	if err != nil {
		t.Fatal(err)
	}
	d := e.dialog(t)
	e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "h1", Name: "handoff_to_human", Arguments: `{"reason":"asked"}`}}})
	turn, err := e.client(chat.Key).SendMessage(ctx, "shop", d, "a person please")
	if err != nil {
		t.Fatal(err)
	}
	// The helpdesk's side: apiclient follows the dialog on the other server.
	followCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	heard := make(chan apiclient.Event, 16)
	go func() {
		_ = other.client(e.key).FollowDialog(followCtx, "shop", d, 0, func(ev apiclient.Event) error {
			heard <- ev
			return nil
		})
		close(heard)
	}()
	operator := &followed{events: heard, stop: cancel}
	operator.next(t, "handoff")
	if err := e.client(chat.Key).Typing(ctx, "shop", d); err != nil {
		t.Fatal(err)
	}
	var typing apiclient.TypingEvent
	if err := json.Unmarshal(operator.next(t, "typing").Data, &typing); err != nil || typing.Who != "user" {
		t.Fatalf("typing event %+v, %v", typing, err)
	}
	seq := turn.Messages[len(turn.Messages)-1].Seq
	if _, err := e.client(chat.Key).MarkRead(ctx, "shop", d, seq); err != nil {
		t.Fatal(err)
	}
	var read apiclient.ReadMark
	if err := json.Unmarshal(operator.next(t, "read").Data, &read); err != nil || read.Who != "user" || read.Seq != seq {
		t.Fatalf("read event %+v, %v", read, err)
	}
	operator.stop()
}
