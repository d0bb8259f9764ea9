package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
)

func twoToolTurn(e *chatEnv) {
	e.llm.Enqueue(
		llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{
			{ID: "c1", Name: "lookup_order", Arguments: `{"order":"A7"}`},
			{ID: "c2", Name: "check_stock", Arguments: `{"item":"tent"}`}}},
		llmtest.ServerReply{Text: "A7 shipped and tents are in stock."},
	)
}

func TestAStreamedTwoToolTurn(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		d := e.dialog(t)
		twoToolTurn(e)
		r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text":"A7? tents?"}`, "Accept", "text/event-stream")
		if r.StatusCode != http.StatusOK || r.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("status %d, content type %q: %s", r.StatusCode, r.Header.Get("Content-Type"), r.body)
		}
		evs := readSSE(t, r.body)
		t.Run("the events arrive in order", func(t *testing.T) {
			want := "dialog message turn_start message tool_call tool_call message tool_result message tool_result turn_end " +
				"turn_start text_delta… message turn_end done"
			if got := types(evs); got != want {
				t.Fatalf("events\n got %s\nwant %s", got, want)
			}
		})
		t.Run("the dialog event names the dialog and the last event is done", func(t *testing.T) {
			if evs[0].data["dialog_id"] != d {
				t.Fatalf("dialog event %v", evs[0].data)
			}
			last := evs[len(evs)-1].data
			if last["stop_reason"] != "completed" || last["text"] != "A7 shipped and tents are in stock." {
				t.Fatalf("done %v", last)
			}
		})
		t.Run("tool calls carry object arguments and results their content", func(t *testing.T) {
			for _, ev := range evs {
				if ev.typ == "tool_call" {
					if _, ok := ev.data["arguments"].(map[string]any); !ok {
						t.Fatalf("tool_call %v", ev.data)
					}
				}
				if ev.typ == "tool_result" && ev.data["name"] == "lookup_order" && !strings.Contains(strings.ReplaceAll(ev.data["content"].(string), " ", ""), `"auth_ok":true`) {
					t.Fatalf("tool_result %v", ev.data)
				}
			}
		})
		t.Run("the secret never reaches the stream", func(t *testing.T) {
			if strings.Contains(r.body, chatSecret) {
				t.Fatal("the stream holds the secret")
			}
		})
		t.Run("metrics count the model calls, tool calls, the run and no open stream", func(t *testing.T) {
			m := e.raw(t, "GET", "/metrics", "", "").body
			for _, want := range []string{
				`parley_tool_calls_total{kind="http",outcome="ok"} 2`,
				`parley_tool_duration_seconds_count{kind="http",outcome="ok"} 2`,
				`parley_dialog_runs_total{stop_reason="completed"} 1`,
				`parley_llm_request_duration_seconds_count{model="gpt-4o-mini",outcome="ok",provider="openai"} 2`,
				`parley_llm_tokens_total{direction="output",model="gpt-4o-mini",provider="openai"}`,
				"parley_active_streams 0",
			} {
				if !strings.Contains(m, want) {
					t.Errorf("metrics lack %s", want)
				}
			}
		})
		t.Run("the dialog holds the messages and tool calls", func(t *testing.T) {
			g := e.raw(t, "GET", "/v1/tenants/shop/dialogs/"+d, e.key, "")
			var got apiclient.DialogDetail
			if err := json.Unmarshal([]byte(g.body), &got); err != nil || g.StatusCode != 200 {
				t.Fatalf("%d %s", g.StatusCode, g.body)
			}
			if len(got.Messages) != 5 || len(got.ToolCalls) != 2 || got.Messages[4].Version != 1 {
				t.Fatalf("dialog %+v", got)
			}
		})
	})
}

func TestTheSameTurnAsJSON(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		d := e.dialog(t)
		twoToolTurn(e)
		r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text":"A7? tents?"}`)
		if r.StatusCode != http.StatusOK {
			t.Fatalf("%d %s", r.StatusCode, r.body)
		}
		var turn apiclient.Turn
		if err := json.Unmarshal([]byte(r.body), &turn); err != nil {
			t.Fatal(err)
		}
		kinds := []string{}
		for _, m := range turn.Messages {
			kinds = append(kinds, m.Kind)
		}
		if strings.Join(kinds, " ") != "user assistant tool_result tool_result assistant" {
			t.Fatalf("messages %v", kinds)
		}
		if turn.Done == nil || turn.Done.Text != "A7 shipped and tents are in stock." || turn.DialogID != d {
			t.Fatalf("turn %+v", turn)
		}
	})
}

func TestPauseAndResumeOverHTTP(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		t.Run("a client tool result resumes the dialog", func(t *testing.T) {
			d := e.dialog(t)
			e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "g1", Name: "locate", Arguments: `{}`}}},
				llmtest.ServerReply{Text: "You are in Oslo."})
			r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text":"where am I?"}`, "Accept", "text/event-stream")
			if !strings.Contains(types(readSSE(t, r.body)), "client_tool_request turn_end done") {
				t.Fatalf("stream %s", r.body)
			}
			r = e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/tool-results", e.key, `{"results":[{"id":"g1","content":"{\"city\":\"Oslo\"}"}]}`)
			var turn apiclient.Turn
			json.Unmarshal([]byte(r.body), &turn)
			if r.StatusCode != 200 || turn.Done == nil || turn.Done.Text != "You are in Oslo." {
				t.Fatalf("%d %s", r.StatusCode, r.body)
			}
		})
		t.Run("results for a dialog that waits for nothing are a conflict", func(t *testing.T) {
			d := e.dialog(t)
			r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/tool-results", e.key, `{"results":[{"id":"zz","content":"x"}]}`)
			if r.StatusCode != http.StatusConflict {
				t.Fatalf("%d %s", r.StatusCode, r.body)
			}
		})
		t.Run("an approved confirmation runs the call", func(t *testing.T) {
			d := e.dialog(t)
			e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "k1", Name: "cancel_order", Arguments: `{"order":"Z9"}`}}},
				llmtest.ServerReply{Text: "Cancelled Z9."})
			r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text":"cancel Z9"}`)
			if !strings.Contains(r.body, `"kind":"confirmation"`) || e.shopCalls("POST /orders/Z9/cancel") != 0 {
				t.Fatalf("%s", r.body)
			}
			r = e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/confirmations", e.key, `{"id":"k1"}`)
			if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, "/approved") {
				t.Fatalf("a confirmation without approved: %d %s", r.StatusCode, r.body)
			}
			r = e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/confirmations", e.key, `{"id":"k1","approved":true}`)
			if r.StatusCode != 200 || !strings.Contains(r.body, "Cancelled Z9.") || e.shopCalls("POST /orders/Z9/cancel") != 1 {
				t.Fatalf("%d %s", r.StatusCode, r.body)
			}
		})
	})
}

func TestHandoffOverHTTP(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		d := e.dialog(t)
		e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "h1", Name: "handoff_to_human", Arguments: `{"reason":"asked"}`}}})
		r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text":"a person please"}`)
		if !strings.Contains(r.body, `"stop_reason":"handoff"`) {
			t.Fatalf("%s", r.body)
		}
		before := len(e.llm.Requests())
		r = e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text":"still there?"}`, "Accept", "text/event-stream")
		if got := types(readSSE(t, r.body)); got != "dialog message done" || len(e.llm.Requests()) != before {
			t.Fatalf("after handoff: %s (model asked %d more times)", got, len(e.llm.Requests())-before)
		}
		r = e.raw(t, "GET", "/v1/tenants/shop/dialogs?status=handoff", e.key, "")
		if !strings.Contains(r.body, d) {
			t.Fatalf("handoff list %s", r.body)
		}
	})
}

func TestRateLimitsAnswer429WithRetryAfter(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		limits dialog.Limits
	}{
		{"a key over its message rate", dialog.Limits{KeyRate: 0.01, KeyBurst: 1}},
		{"a tenant over its rate", dialog.Limits{TenantRate: 0.01, TenantBurst: 1}},
		{"a tenant over its daily tokens", dialog.Limits{DailyTokens: 5}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachChat(t, tc.limits, func(t *testing.T, e *chatEnv) {
				d := e.dialog(t)
				e.llm.Enqueue(llmtest.ServerReply{Text: "first"})
				if r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text":"1"}`); r.StatusCode != 200 {
					t.Fatalf("first: %d %s", r.StatusCode, r.body)
				}
				r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text":"2"}`, "Accept", "text/event-stream")
				secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
				if r.StatusCode != http.StatusTooManyRequests || err != nil || secs < 1 || !strings.Contains(r.body, `"rate_limited"`) {
					t.Fatalf("second: %d Retry-After %q: %s", r.StatusCode, r.Header.Get("Retry-After"), r.body)
				}
			})
		})
	}
}

func TestAKeyOverItsOwnLimitLeavesItsTenantsBudgetToTheOthers(t *testing.T) {
	t.Parallel()
	// Each key may send one message a while; the tenant three. The
	// runaway key's refused requests must not spend the tenant's tokens.
	forEachChat(t, dialog.Limits{KeyRate: 0.001, KeyBurst: 1, TenantRate: 0.001, TenantBurst: 3}, func(t *testing.T, e *chatEnv) {
		ctx := context.Background()
		other, err := e.svc.APIKeys().Create(ctx, platform.Operator(), "shop", platform.APIKeyInput{Name: "other", Scopes: []string{"chat"}})
		if err != nil {
			t.Fatal(err)
		}
		d := e.dialog(t)
		e.llm.Enqueue(llmtest.ServerReply{Text: "first"})
		if r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text":"1"}`); r.StatusCode != 200 {
			t.Fatalf("the runaway key's first message: %d %s", r.StatusCode, r.body)
		}
		for i := range 5 {
			r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text":"again"}`)
			if r.StatusCode != http.StatusTooManyRequests || !strings.Contains(r.body, "API key") {
				t.Fatalf("the runaway key's message %d: %d %s; want 429 for the key", i+2, r.StatusCode, r.body)
			}
		}
		d2 := e.raw(t, "POST", "/v1/tenants/shop/bots/helper/dialogs", other.Key, `{}`)
		var dlg apiclient.Dialog
		json.Unmarshal([]byte(d2.body), &dlg)
		e.llm.Enqueue(llmtest.ServerReply{Text: "served"})
		if r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+dlg.ID+"/messages", other.Key, `{"text":"hello"}`); r.StatusCode != 200 {
			t.Fatalf("another key of the tenant, after the runaway one was refused: %d %s; want 200", r.StatusCode, r.body)
		}
	})
}

func TestIdempotencyKeys(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		send := func(d, key, body string, headers ...string) rawResponse {
			return e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, body, append([]string{"Idempotency-Key", key}, headers...)...)
		}
		for _, form := range []struct{ name, accept string }{{"JSON", "application/json"}, {"SSE", "text/event-stream"}} {
			t.Run("a retried "+form.name+" message replays the first response and runs once", func(t *testing.T) {
				d := e.dialog(t)
				e.llm.Enqueue(llmtest.ServerReply{Text: "Only once."})
				before := len(e.llm.Requests())
				first := send(d, "key-"+form.name, `{"text":"hi"}`, "Accept", form.accept)
				again := send(d, "key-"+form.name, `{"text":"hi"}`, "Accept", form.accept)
				if first.StatusCode != 200 || again.StatusCode != first.StatusCode || again.body != first.body {
					t.Fatalf("first %d %q\nagain %d %q", first.StatusCode, first.body, again.StatusCode, again.body)
				}
				if again.Header.Get("Idempotent-Replayed") != "true" || len(e.llm.Requests()) != before+1 {
					t.Fatalf("replayed %q, model calls %d", again.Header.Get("Idempotent-Replayed"), len(e.llm.Requests())-before)
				}
				var dd apiclient.DialogDetail
				json.Unmarshal([]byte(e.raw(t, "GET", "/v1/tenants/shop/dialogs/"+d, e.key, "").body), &dd)
				if len(dd.Messages) != 2 {
					t.Fatalf("%d messages stored", len(dd.Messages))
				}
			})
		}
		t.Run("the same key on another request is 422", func(t *testing.T) {
			d := e.dialog(t)
			e.llm.Enqueue(llmtest.ServerReply{Text: "ok"})
			send(d, "reused", `{"text":"one"}`)
			if r := send(d, "reused", `{"text":"two"}`); r.StatusCode != http.StatusUnprocessableEntity {
				t.Fatalf("%d %s", r.StatusCode, r.body)
			}
		})
		t.Run("a refused request frees its key for the retry", func(t *testing.T) {
			d := e.dialog(t)
			if r := send(d, "refused", `{"text":""}`); r.StatusCode != http.StatusUnprocessableEntity {
				t.Fatalf("%d %s", r.StatusCode, r.body)
			}
			e.llm.Enqueue(llmtest.ServerReply{Text: "ok"})
			if r := send(d, "refused", `{"text":"now with text"}`); r.StatusCode != 200 {
				t.Fatalf("%d %s", r.StatusCode, r.body)
			}
		})
		t.Run("a retryable failure is not the key's answer: the same request runs again and stores its text once", func(t *testing.T) {
			d := e.dialog(t)
			e.llm.Enqueue(llmtest.RateLimited(""))
			if r := send(d, "overloaded", `{"text":"hi"}`); r.StatusCode != http.StatusServiceUnavailable {
				t.Fatalf("%d %s; want the provider's overload, 503", r.StatusCode, r.body)
			}
			e.llm.Enqueue(llmtest.ServerReply{Text: "Now answered."})
			r := send(d, "overloaded", `{"text":"hi"}`)
			if r.StatusCode != 200 || r.Header.Get("Idempotent-Replayed") != "" || !strings.Contains(r.body, "Now answered.") {
				t.Fatalf("the retry: %d replayed %q %s; want the turn run again", r.StatusCode, r.Header.Get("Idempotent-Replayed"), r.body)
			}
			if texts := userTexts(t, e.env, e.key, d); len(texts) != 1 {
				t.Fatalf("user messages stored %q, want the text once", texts)
			}
			if r := send(d, "overloaded", `{"text":"another"}`); r.StatusCode != http.StatusUnprocessableEntity {
				t.Fatalf("the key on another request: %d %s, want 422", r.StatusCode, r.body)
			}
		})
		t.Run("a duplicate while the first still runs is 409", func(t *testing.T) {
			d := e.dialog(t)
			e.llm.Enqueue(llmtest.ServerReply{Text: "slow", Fault: &llmtest.Fault{Latency: 500 * time.Millisecond}})
			var wg sync.WaitGroup
			var first rawResponse
			before := len(e.llm.Requests())
			wg.Go(func() { first = send(d, "dup", `{"text":"hi"}`) })
			for len(e.llm.Requests()) == before {
				time.Sleep(2 * time.Millisecond)
			}
			dup := send(d, "dup", `{"text":"hi"}`)
			wg.Wait()
			if dup.StatusCode != http.StatusConflict || first.StatusCode != 200 {
				t.Fatalf("first %d, duplicate %d %s", first.StatusCode, dup.StatusCode, dup.body)
			}
			if dup.Header.Get("Retry-After") != "1" {
				t.Fatalf("the 409 of a request still answered says Retry-After %q, want 1", dup.Header.Get("Retry-After"))
			}
		})
	})
}

func TestDialogEdgeCases(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		d := e.dialog(t)
		t.Run("the user message is stored even when the model fails", func(t *testing.T) {
			e.llm.Enqueue(llmtest.ServerFailure(), llmtest.ServerFailure(), llmtest.ServerFailure(), llmtest.ServerFailure())
			r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text":"are you there?"}`, "Accept", "text/event-stream")
			evs := readSSE(t, r.body)
			if got := types(evs); !strings.HasSuffix(got, "error done") {
				t.Fatalf("events %s", got)
			}
			var dd apiclient.DialogDetail
			json.Unmarshal([]byte(e.raw(t, "GET", "/v1/tenants/shop/dialogs/"+d, e.key, "").body), &dd)
			if len(dd.Messages) == 0 || dd.Messages[0].Text != "are you there?" || dd.Messages[0].Status != "complete" {
				t.Fatalf("messages %+v", dd.Messages)
			}
		})
		t.Run("another tenant's dialog is 404", func(t *testing.T) {
			other := e.mustCreateTenant(t, "other")
			for _, path := range []string{"/v1/tenants/other/dialogs/" + d, "/v1/tenants/shop/dialogs/" + d} {
				if r := e.raw(t, "GET", path, other, ""); r.StatusCode != http.StatusNotFound {
					t.Fatalf("GET %s: %d %s", path, r.StatusCode, r.body)
				}
				if r := e.raw(t, "POST", path+"/messages", other, `{"text":"hi"}`); r.StatusCode != http.StatusNotFound {
					t.Fatalf("POST %s: %d %s", path, r.StatusCode, r.body)
				}
			}
		})
		t.Run("an oversized message is 413 before anything is stored", func(t *testing.T) {
			// Larger than the room for a text and four images of the
			// largest size.
			big := `{"text":"` + strings.Repeat("x", 30<<20) + `"}`
			if r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, big); r.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("%d %s", r.StatusCode, r.body[:min(200, len(r.body))])
			}
		})
		t.Run("a message over the length limit is 422 at /text", func(t *testing.T) {
			long := `{"text":"` + strings.Repeat("y", dialog.MaxMessageChars+1) + `"}`
			r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, long)
			if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, `"/text"`) {
				t.Fatalf("%d %s", r.StatusCode, r.body)
			}
		})
		t.Run("a blank message is 422 at /text", func(t *testing.T) {
			r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text":" \n\t "}`)
			if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, `"/text"`) {
				t.Fatalf("%d %s", r.StatusCode, r.body)
			}
		})
		t.Run("unknown context variables are 422 with their pointers", func(t *testing.T) {
			r := e.raw(t, "POST", "/v1/tenants/shop/bots/helper/dialogs", e.key, `{"context":{"nope":"x"}}`)
			if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, `"/context/nope"`) {
				t.Fatalf("%d %s", r.StatusCode, r.body)
			}
		})
		t.Run("usage reports the tenant's tokens by bot", func(t *testing.T) {
			r := e.raw(t, "GET", "/v1/tenants/shop/usage?group_by=bot", e.key, "")
			if r.StatusCode != 200 || !strings.Contains(r.body, `"group_by":"bot"`) {
				t.Fatalf("%d %s", r.StatusCode, r.body)
			}
			if r := e.raw(t, "GET", "/v1/tenants/shop/usage?group_by=week", e.key, ""); r.StatusCode != http.StatusUnprocessableEntity {
				t.Fatalf("group_by=week: %d %s", r.StatusCode, r.body)
			}
		})
	})
}

func TestTheGoClientDrivesADialog(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		ctx := context.Background()
		cl := e.client(e.key)
		d, err := cl.CreateDialog(ctx, "shop", "helper", apiclient.CreateDialogRequest{UserID: "u7"})
		if err != nil || d.Status != "active" || d.Version != 1 {
			t.Fatalf("dialog %+v, %v", d, err)
		}
		t.Run("a streamed message arrives event by event", func(t *testing.T) {
			e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "x1", Name: "cancel_order", Arguments: `{"order":"Q1"}`}}})
			var got []string
			err := cl.StreamMessage(ctx, "shop", d.ID, "cancel Q1", "", func(ev apiclient.Event) error {
				got = append(got, ev.Type)
				return nil
			})
			if err != nil || !strings.HasSuffix(strings.Join(got, " "), "confirmation_request turn_end done") {
				t.Fatalf("events %v, %v", got, err)
			}
		})
		t.Run("the paused dialog lists its pending call and a confirmation resumes it", func(t *testing.T) {
			paused, err := cl.ListDialogs(ctx, "shop", "helper", "paused", "")
			if err != nil || len(paused.Dialogs) != 1 || len(paused.Dialogs[0].Pending) != 1 || paused.Dialogs[0].Pending[0].Kind != "confirmation" {
				t.Fatalf("paused %+v, %v", paused, err)
			}
			e.llm.Enqueue(llmtest.ServerReply{Text: "Kept it."})
			turn, err := cl.Confirm(ctx, "shop", d.ID, "x1", false)
			if err != nil || turn.Done == nil || turn.Done.Text != "Kept it." || turn.Done.StopReason != "completed" {
				t.Fatalf("turn %+v, %v", turn, err)
			}
		})
		t.Run("a retried stream with the same key replays without a model call", func(t *testing.T) {
			e.llm.Enqueue(llmtest.ServerReply{Text: "Once."})
			collect := func() (string, error) {
				var b strings.Builder
				err := cl.StreamMessage(ctx, "shop", d.ID, "again?", "retry-1", func(ev apiclient.Event) error {
					b.WriteString(ev.Type + " " + string(ev.Data) + "\n")
					return nil
				})
				return b.String(), err
			}
			before := len(e.llm.Requests())
			first, err1 := collect()
			second, err2 := collect()
			if err1 != nil || err2 != nil || first != second || len(e.llm.Requests()) != before+1 {
				t.Fatalf("first %q (%v)\nsecond %q (%v)", first, err1, second, err2)
			}
		})
		t.Run("the history and usage read back through the client", func(t *testing.T) {
			dd, err := cl.GetDialog(ctx, "shop", d.ID)
			if err != nil || len(dd.ToolCalls) != 1 || dd.ToolCalls[0].Status != "done" || !dd.ToolCalls[0].IsError {
				t.Fatalf("dialog %+v, %v", dd, err)
			}
			u, err := cl.Usage(ctx, "shop", "", "", "day")
			if err != nil || len(u.Usage) != 1 || u.Usage[0].Turns != 3 {
				t.Fatalf("usage %+v, %v", u, err)
			}
		})
		t.Run("errors come back as API errors with their status", func(t *testing.T) {
			_, err := cl.SendMessage(ctx, "shop", "dlg_missing", "hi")
			var apiErr *apiclient.Error
			if !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
				t.Fatalf("error %v", err)
			}
		})
	})
}

// A tenant's plan (PUT /limits, the platform token only) overrides the
// server's limits for that tenant alone: a quota or a rate where the
// server has none, and null fields keep the server's.
func TestATenantsPlanSetsItsOwnLimits(t *testing.T) {
	t.Parallel()
	quota, zero, rate, burst := int64(5), 0.0, 0.001, 1
	cases := []struct {
		name    string
		server  dialog.Limits
		plan    apiclient.TenantLimits
		refused bool
	}{
		{"a daily quota where the server has none", dialog.Limits{}, apiclient.TenantLimits{DailyTokenQuota: &quota}, true},
		{"a rate where the server has none", dialog.Limits{}, apiclient.TenantLimits{RatePerSecond: &rate, RateBurst: &burst}, true},
		{"no rate where the server has one", dialog.Limits{TenantRate: 0.001, TenantBurst: 1}, apiclient.TenantLimits{RatePerSecond: &zero}, false},
		{"null fields keep the server's", dialog.Limits{DailyTokens: 5}, apiclient.TenantLimits{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachChat(t, tc.server, func(t *testing.T, e *chatEnv) {
				ctx := context.Background()
				if _, err := apiclient.New(e.srv.URL, e.key).PutTenantLimits(ctx, "shop", tc.plan); err == nil {
					t.Fatal("a tenant admin set its own plan")
				}
				if _, err := apiclient.New(e.srv.URL, testPlatformToken).PutTenantLimits(ctx, "shop", tc.plan); err != nil {
					t.Fatal(err)
				}
				if got, err := apiclient.New(e.srv.URL, e.key).TenantLimits(ctx, "shop"); err != nil || !reflect.DeepEqual(*got, tc.plan) {
					t.Fatalf("the tenant reads its plan as %+v, %v", got, err)
				}
				d := e.dialog(t)
				e.llm.Enqueue(llmtest.ServerReply{Text: "first"}, llmtest.ServerReply{Text: "second"})
				if r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text":"1"}`); r.StatusCode != 200 {
					t.Fatalf("first: %d %s", r.StatusCode, r.body)
				}
				r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d+"/messages", e.key, `{"text":"2"}`)
				if refused := r.StatusCode == http.StatusTooManyRequests; refused != tc.refused {
					t.Fatalf("second: %d %s; refused should be %v", r.StatusCode, r.body, tc.refused)
				}
			})
		})
	}
}

// A bot with llm.quota_downgrade answers with its cheaper model once its
// tenant has used that share of its daily quota, and with its own before.
func TestABotMovesToItsCheaperModelNearTheQuota(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{DailyTokens: 100}, func(t *testing.T, e *chatEnv) {
		ctx := context.Background()
		config := `{"basic_settings": {"name": "Frugal"}, "llm": {"model": "gpt-4o",
			"quota_downgrade": {"at": 0.5, "model": "gpt-4o-mini"}}}`
		if _, _, err := e.svc.Bots().Create(ctx, platform.Operator(), "shop", "frugal", []byte(config)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Versions().Publish(ctx, platform.Operator(), "shop", "frugal", 1); err != nil {
			t.Fatal(err)
		}
		r := e.raw(t, "POST", "/v1/tenants/shop/bots/frugal/dialogs", e.key, `{}`)
		var d apiclient.Dialog
		if err := json.Unmarshal([]byte(r.body), &d); err != nil {
			t.Fatalf("create dialog: %d %s", r.StatusCode, r.body)
		}
		models := []string{}
		for i, used := range []int{30, 30, 10} { // 0 used, then 30 (under half), then 60 (over half)
			e.llm.Enqueue(llmtest.ServerReply{Text: "ok", Usage: &llm.Usage{InputTokens: used}})
			if r := e.raw(t, "POST", "/v1/tenants/shop/dialogs/"+d.ID+"/messages", e.key, fmt.Sprintf(`{"text":"%d"}`, i)); r.StatusCode != 200 {
				t.Fatalf("message %d: %d %s", i, r.StatusCode, r.body)
			}
			models = append(models, e.llm.LastRequest().Model)
		}
		if want := []string{"gpt-4o", "gpt-4o", "gpt-4o-mini"}; !reflect.DeepEqual(models, want) {
			t.Fatalf("models asked %v, want %v", models, want)
		}
	})
}
