package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

func TestAJSONTurnWhoseRunFailedAnswersAnErrorStatus(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		reply    llmtest.ServerReply
		status   int
		wantCode string
	}{
		{"the provider failing is 502", llmtest.ServerReply{Fault: &llmtest.Fault{Status: 500, Type: "server_error", Message: "boom"}},
			http.StatusBadGateway, "llm_server"},
		{"the provider refusing the platform's key is 502", llmtest.ServerReply{Fault: &llmtest.Fault{Status: 401, Type: "invalid_request_error", Message: "bad key"}},
			http.StatusBadGateway, "llm_auth"},
		{"the provider busy is 503", llmtest.RateLimited(""), http.StatusServiceUnavailable, "llm_rate_limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
				d := e.dialog(t)
				e.llm.Enqueue(tc.reply)
				r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text":"hello"}`)
				var turn apiclient.Turn
				if err := json.Unmarshal([]byte(r.body), &turn); err != nil {
					t.Fatalf("%d %s: %v", r.StatusCode, r.body, err)
				}
				if r.StatusCode != tc.status || turn.Error == nil || turn.Error.Code != tc.wantCode {
					t.Fatalf("%d %s; want %d with error %s", r.StatusCode, r.body, tc.status, tc.wantCode)
				}
				if len(turn.Messages) == 0 || turn.Messages[0].Text != "hello" {
					t.Fatalf("the body lost what was stored: %s", r.body)
				}
			})
		})
	}
}

func TestAReplyCutByTheServersShutdownSaysItIsRestarting(t *testing.T) {
	t.Parallel()
	for _, form := range []struct{ name, accept string }{{"stream", "text/event-stream"}, {"JSON", "application/json"}} {
		t.Run("a "+form.name, func(t *testing.T) {
			forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
				d := e.dialog(t)
				e.llm.Enqueue(llmtest.ServerReply{Text: "never", Fault: &llmtest.Fault{Latency: time.Minute}})
				before := len(e.llm.Requests())
				got := make(chan rawResponse, 1)
				go func() {
					got <- e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text":"hello"}`, "Accept", form.accept)
				}()
				for len(e.llm.Requests()) == before {
					time.Sleep(5 * time.Millisecond)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := e.rt.Shutdown(ctx); err != nil {
					t.Fatal(err)
				}
				r := <-got
				var last map[string]any
				if form.name == "stream" {
					evs := readSSE(t, r.body)
					for _, ev := range evs {
						if ev.typ == "error" {
							last = ev.data
						}
					}
				} else {
					var turn map[string]any
					json.Unmarshal([]byte(r.body), &turn)
					last, _ = turn["error"].(map[string]any)
					if r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
						t.Fatalf("%d Retry-After %q: %s; want 503 with Retry-After", r.StatusCode, r.Header.Get("Retry-After"), r.body)
					}
				}
				if last == nil || last["code"] != dialog.EventServerRestarting || last["retryable"] != true {
					t.Fatalf("the error event %v; want a retryable %s: %s", last, dialog.EventServerRestarting, r.body)
				}
			})
		})
	}
}
