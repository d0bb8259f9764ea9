package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
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
				r := cutByShutdown(t, e, func() rawResponse {
					return e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text":"hello"}`, "Accept", form.accept)
				})
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

// userTexts are the texts of the user messages dialog d holds.
func userTexts(t *testing.T, srv *env, key, d string) []string {
	t.Helper()
	var dd apiclient.DialogDetail
	if err := json.Unmarshal([]byte(srv.raw(t, "GET", "/v1/tenants/shop/dialogs/"+d, key, "").body), &dd); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range dd.Messages {
		if m.Kind == "user" {
			texts = append(texts, m.Text)
		}
	}
	return texts
}

// cutByShutdown sends a message with send while the model holds its reply
// back, shuts the runtime down as SIGTERM does, and returns the answer.
func cutByShutdown(t *testing.T, e *chatEnv, send func() rawResponse) rawResponse {
	t.Helper()
	e.llm.Enqueue(llmtest.ServerReply{Text: "never", Fault: &llmtest.Fault{Latency: time.Minute}})
	before := len(e.llm.Requests())
	got := make(chan rawResponse, 1)
	go func() { got <- send() }()
	for len(e.llm.Requests()) == before {
		time.Sleep(5 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.rt.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	return <-got
}

// TestARetryWithTheSameKeyAfterAShutdownRunsTheTurnOnce: a reply its
// server's shutdown cut says "retry", so its Idempotency-Key must not
// replay that answer. The client retries with the same key, as docs/api.md
// tells it to, on another server of the same database: the turn is
// answered, and the dialog holds the user's text once.
func TestARetryWithTheSameKeyAfterAShutdownRunsTheTurnOnce(t *testing.T) {
	t.Parallel()
	for _, form := range []struct{ name, accept string }{{"stream", "text/event-stream"}, {"JSON", "application/json"}} {
		t.Run("a "+form.name, func(t *testing.T) {
			storetest.ForEach(t, func(t *testing.T, st *store.Store) {
				e := newChatEnv(t, st, dialog.Limits{})
				d := e.dialog(t)
				send := func(srv *env) rawResponse {
					return srv.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text":"hello"}`,
						"Accept", form.accept, "Idempotency-Key", "k-"+form.name)
				}
				if cut := cutByShutdown(t, e, func() rawResponse { return send(e.env) }); !strings.Contains(cut.body, dialog.EventServerRestarting) {
					t.Fatalf("the cut reply %d %s; want it to say %s", cut.StatusCode, cut.body, dialog.EventServerRestarting)
				}

				other, _ := e.serve(t, st)
				e.llm.Enqueue(llmtest.ServerReply{Text: "Answered once."})
				retry := send(other)
				if retry.StatusCode != http.StatusOK || retry.Header.Get("Idempotent-Replayed") != "" || !strings.Contains(retry.body, "Answered once.") {
					t.Fatalf("the retry: %d replayed %q %s; want the turn answered afresh", retry.StatusCode, retry.Header.Get("Idempotent-Replayed"), retry.body)
				}
				if texts := userTexts(t, other, e.key, d); len(texts) != 1 {
					t.Fatalf("the dialog holds the user messages %q, want the text once", texts)
				}
				if again := send(other); again.Header.Get("Idempotent-Replayed") != "true" || again.body != retry.body {
					t.Fatalf("the key after the answered retry: %d replayed %q %s; want the answer replayed", again.StatusCode, again.Header.Get("Idempotent-Replayed"), again.body)
				}
			})
		})
	}
}
