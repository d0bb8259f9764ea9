package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
	"github.com/parleyhq/parley/pkg/webhook"
)

// The OpenAI and MCP faces run their turns through the dialog runtime, so
// what any dialog writes, theirs write too: usage rows and webhook events.
func TestTheFacesDialogsAreMeteredAndWriteWebhookEvents(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newChatEnv(t, st, dialog.Limits{})
		if _, err := e.svc.Webhooks().Create(t.Context(), platform.Operator(), "shop", platform.WebhookInput{URL: "https://hooks.example.com/",
			Events: []string{webhook.DialogCreated, webhook.MessageCreated}}); err != nil {
			t.Fatal(err)
		}
		e.llm.Enqueue(llmtest.ServerReply{Text: "Blue, still."}, llmtest.ServerReply{Text: "Streamed."}, llmtest.ServerReply{Text: "Over MCP."})
		_, r := e.complete(t, e.key, `{"model":"helper","messages":[{"role":"user","content":"Colour?"},{"role":"assistant","content":"Blue."},
			{"role":"user","content":"Still?"}]}`)
		openaiDialog := r.Header.Get("X-Parley-Dialog")
		s := e.raw(t, "POST", "/v1/chat/completions", e.key, `{"model":"helper","stream":true,"messages":[{"role":"user","content":"Stream it."}]}`)
		streamDialog := s.Header.Get("X-Parley-Dialog")
		if s.StatusCode != http.StatusOK || !strings.Contains(s.body, "[DONE]") {
			t.Fatalf("stream %d %s", s.StatusCode, s.body)
		}
		mcpReply, isErr := ask(t, e.mcpSession(t, e.key, "helper"), "Ask it.")
		if isErr || mcpReply != "Over MCP." {
			t.Fatalf("ask %q %v", mcpReply, isErr)
		}

		t.Run("each face's dialog writes dialog.created with its channel", func(t *testing.T) {
			var got []string
			for _, d := range platformtest.OutboxData(t, st, webhook.DialogCreated) {
				dl := d["dialog"].(map[string]any)
				got = append(got, dl["channel"].(string))
				if dl["id"] == openaiDialog && dl["channel"] != "openai" || dl["id"] == streamDialog && dl["channel"] != "openai" {
					t.Fatalf("dialog.created %v", d)
				}
			}
			if !slices.Equal(got, []string{"openai", "openai", "mcp"}) {
				t.Fatalf("dialog.created channels %v", got)
			}
		})
		t.Run("their new messages write message.created, not the history a request replays", func(t *testing.T) {
			said := map[string][]string{}
			for _, d := range platformtest.OutboxData(t, st, webhook.MessageCreated) {
				m := d["message"].(map[string]any)
				id := d["dialog_id"].(string)
				said[id] = append(said[id], m["role"].(string)+":"+m["text"].(string))
			}
			want := map[string]string{openaiDialog: "user:Still?|assistant:Blue, still.", streamDialog: "user:Stream it.|assistant:Streamed."}
			for id, w := range want {
				if got := strings.Join(said[id], "|"); got != w {
					t.Fatalf("message.created of %s: %q, want %q (all: %v)", id, got, w, said)
				}
			}
			if len(said) != 3 {
				t.Fatalf("message.created for %d dialogs, want 3: %v", len(said), said)
			}
			for id, msgs := range said {
				if id != openaiDialog && id != streamDialog && strings.Join(msgs, "|") != "user:Ask it.|assistant:Over MCP." {
					t.Fatalf("the MCP dialog's message.created: %v", msgs)
				}
			}
		})
		t.Run("usage counts every face's turn and tokens", func(t *testing.T) {
			r := e.raw(t, "GET", "/v1/tenants/shop/usage?group_by=key", e.key, "")
			var rep apiclient.UsageReport
			if err := json.Unmarshal([]byte(r.body), &rep); err != nil || len(rep.Usage) != 1 {
				t.Fatalf("%d %s", r.StatusCode, r.body)
			}
			if u := rep.Usage[0]; u.Turns != 3 || u.InputTokens == 0 || u.OutputTokens == 0 {
				t.Fatalf("usage %+v", u)
			}
		})
	})
}

// A text sent to a stored dialog while it answers joins that reply and is
// answered there: a 409 that OpenAI's SDKs, which retry a 409 by default,
// must not send again, or the text would be stored twice.
func TestATextJoiningARunningReplyIsA409TheSDKsDoNotRetry(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		d := e.dialog(t)
		e.llm.Enqueue(llmtest.ServerReply{Text: "One moment.", Fault: &llmtest.Fault{Latency: 500 * time.Millisecond}},
			llmtest.ServerReply{Text: "Both read."})
		before := len(e.llm.Requests())
		first := make(chan rawResponse, 1)
		go func() {
			first <- e.raw(t, "POST", "/v1/chat/completions", e.key, `{"model":"helper","messages":[{"role":"user","content":"one"}]}`, "X-Parley-Dialog", d)
		}()
		for len(e.llm.Requests()) == before {
			time.Sleep(2 * time.Millisecond)
		}
		r := e.raw(t, "POST", "/v1/chat/completions", e.key, `{"model":"helper","messages":[{"role":"user","content":"two"}]}`, "X-Parley-Dialog", d)
		var got openaiErrOut
		if err := json.Unmarshal([]byte(r.body), &got); err != nil || r.StatusCode != http.StatusConflict ||
			got.Error.Code == nil || *got.Error.Code != "conflict" || r.Header.Get("X-Should-Retry") != "false" {
			t.Fatalf("%d %v %s", r.StatusCode, r.Header, r.body)
		}
		if f := <-first; f.StatusCode != http.StatusOK {
			t.Fatalf("the running reply: %d %s", f.StatusCode, f.body)
		}
	})
}
