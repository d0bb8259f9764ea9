package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// TestTheRequestTesterSendsADraftToolCallAndRedactsTheSecret tries an HTTP
// tool of an unsaved config through the API, as the form editor's request
// tester does, against a real shop server behind the outbound policy.
func TestTheRequestTesterSendsADraftToolCallAndRedactsTheSecret(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newChatEnv(t, st, dialog.Limits{})
		cl := e.client(e.key)
		ctx := context.Background()
		draft := json.RawMessage(chatBot(e.shop.URL))

		t.Run("the answer shows the request sent, the response and the model's result", func(t *testing.T) {
			got, err := cl.TryTool(ctx, "shop", apiclient.ToolTrialRequest{Config: draft, Tool: "lookup_order",
				Arguments: json.RawMessage(`{"order": "A-7"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if got.Request == nil || got.Request.Method != "GET" || got.Request.URL != e.shop.URL+"/orders/A-7" {
				t.Fatalf("request = %+v", got.Request)
			}
			if auth := got.Request.Headers["Authorization"]; len(auth) != 1 || auth[0] != "Bearer [redacted]" {
				t.Errorf("the Authorization header shows as %q", auth)
			}
			if got.Response == nil || got.Response.Status != 200 || got.Response.Body != `{"path": "/orders/A-7", "auth_ok": true}` {
				t.Fatalf("response = %+v; the shop must have got the tenant's secret", got.Response)
			}
			if got.Result.IsError || got.Result.Content != `{"path":"/orders/A-7","auth_ok":true}` {
				t.Errorf("result = %+v", got.Result)
			}
			raw, _ := json.Marshal(got)
			if strings.Contains(string(raw), chatSecret) {
				t.Errorf("the answer shows the secret: %s", raw)
			}
		})

		t.Run("arguments that break the tool's schema are refused before anything is sent", func(t *testing.T) {
			before := e.shopCalls("GET /orders/A-7")
			_, err := cl.TryTool(ctx, "shop", apiclient.ToolTrialRequest{Config: draft, Tool: "lookup_order", Arguments: json.RawMessage(`{}`)})
			wantDetail(t, err, "/arguments", "order")
			if e.shopCalls("GET /orders/A-7") != before {
				t.Error("the shop was called")
			}
		})

		t.Run("an invalid draft is refused with pointers into the config", func(t *testing.T) {
			_, err := cl.TryTool(ctx, "shop", apiclient.ToolTrialRequest{Config: json.RawMessage(`{"basic_settings": {"nam": "x"}}`), Tool: "lookup_order"})
			wantDetail(t, err, "/basic_settings/nam", "")
		})

		t.Run("a tool the draft does not have, or one the client runs, cannot be tried", func(t *testing.T) {
			_, err := cl.TryTool(ctx, "shop", apiclient.ToolTrialRequest{Config: draft, Tool: "nope"})
			wantDetail(t, err, "/tool", "nope")
			_, err = cl.TryTool(ctx, "shop", apiclient.ToolTrialRequest{Config: draft, Tool: "locate"})
			wantDetail(t, err, "/tool", "client")
		})

		t.Run("the metrics count the trial apart from dialog tool calls", func(t *testing.T) {
			m := e.raw(t, "GET", "/metrics", "", "").body
			if !strings.Contains(m, `parley_tool_trials_total{outcome="ok"} 1`) || strings.Contains(m, `parley_tool_calls_total{kind="http"`) {
				t.Errorf("metrics: want one ok trial and no dialog tool call:\n%s", m)
			}
		})

		t.Run("a secret cannot be slipped in as context", func(t *testing.T) {
			_, err := cl.TryTool(ctx, "shop", apiclient.ToolTrialRequest{Config: draft, Tool: "lookup_order",
				Arguments: json.RawMessage(`{"order": "A-7"}`), Context: map[string]string{"secrets.shop_token": "mine"}})
			wantDetail(t, err, "/context/secrets.shop_token", "")
		})
	})
}

// wantDetail fails unless err is a 422 with a detail at pointer whose
// message contains text.
func wantDetail(t *testing.T, err error, pointer, text string) {
	t.Helper()
	var apiErr *apiclient.Error
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnprocessableEntity {
		t.Fatalf("err = %v; want a 422", err)
	}
	for _, d := range apiErr.Details {
		if d.Pointer == pointer && strings.Contains(d.Message, text) {
			return
		}
	}
	t.Errorf("details = %+v; want one at %s mentioning %q", apiErr.Details, pointer, text)
}
