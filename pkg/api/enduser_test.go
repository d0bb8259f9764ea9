package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
)

// TestEndUsersSeeToolCallsByNameOnly: a widget (pk_) caller sees of a
// tool the config does not show only its name and success, in the event
// stream, the JSON answer and the dialog's transcript; a tool with
// show_to_end_user shows its arguments and result. An sk_ caller sees
// everything of the same dialog.
func TestEndUsersSeeToolCallsByNameOnly(t *testing.T) {
	t.Parallel()
	const site = "https://shop.example"
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		pk, err := e.svc.APIKeys().Create(context.Background(), platform.Operator(), "shop",
			platform.APIKeyInput{Name: "widget", Kind: "pk", Bot: "helper", Origins: []string{site}})
		if err != nil {
			t.Fatal(err)
		}
		r := e.raw(t, "POST", "/v1/tenants/shop/bots/helper/dialogs", pk.Key, `{}`, "Origin", site)
		var d apiclient.Dialog
		if err := json.Unmarshal([]byte(r.body), &d); err != nil || r.StatusCode != http.StatusCreated {
			t.Fatalf("create dialog: %d %s", r.StatusCode, r.body)
		}
		messages := "/v1/tenants/shop/dialogs/" + d.ID + "/messages"
		// The order number and the shop's answer are internals; the
		// stock check is shown.
		hidden := []string{"Z9-SECRET", "/orders/"}
		lookup := func(turn string) llmtest.ServerReply {
			return llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{
				{ID: "lookup" + turn, Name: "lookup_order", Arguments: `{"order":"Z9-SECRET"}`},
				{ID: "stock" + turn, Name: "check_stock", Arguments: `{"item":"socks"}`}}}
		}

		t.Run("the event stream", func(t *testing.T) {
			e.llm.Enqueue(lookup("1"), llmtest.ServerReply{Text: "Your order ships tomorrow."})
			r := e.raw(t, "POST", messages, pk.Key, `{"text":"where is my order?"}`, "Origin", site, "Accept", "text/event-stream")
			mustHide(t, r.body, hidden)
			calls, results := map[string]any{}, map[string]any{}
			for _, ev := range readSSE(t, r.body) {
				switch ev.typ {
				case "tool_call":
					calls[ev.data["name"].(string)] = ev.data["arguments"]
				case "tool_result":
					results[ev.data["name"].(string)] = ev.data
				}
			}
			if args, _ := json.Marshal(calls["lookup_order"]); string(args) != `{}` {
				t.Errorf("the hidden call's arguments %s; want {}", args)
			}
			if res, _ := results["lookup_order"].(map[string]any); res == nil || res["content"] != "" || res["is_error"] != false {
				t.Errorf("the hidden call's result %v; want its success without content", res)
			}
			if args, _ := json.Marshal(calls["check_stock"]); string(args) != `{"item":"socks"}` {
				t.Errorf("the shown call's arguments %s", args)
			}
			if res, _ := results["check_stock"].(map[string]any); res == nil || !strings.Contains(res["content"].(string), "/stock/socks") {
				t.Errorf("the shown call's result %v", res)
			}
			if !strings.Contains(r.body, "Your order ships tomorrow.") {
				t.Errorf("the answer is missing: %s", r.body)
			}
		})

		t.Run("the JSON answer", func(t *testing.T) {
			e.llm.Enqueue(lookup("2"), llmtest.ServerReply{Text: "Still tomorrow."})
			r := e.raw(t, "POST", messages, pk.Key, `{"text":"and now?"}`, "Origin", site)
			if r.StatusCode != http.StatusOK || !strings.Contains(r.body, "Still tomorrow.") {
				t.Fatalf("%d %s", r.StatusCode, r.body)
			}
			mustHide(t, r.body, hidden)
			if !strings.Contains(r.body, `"name":"lookup_order"`) || !strings.Contains(r.body, "/stock/socks") {
				t.Errorf("the answer lost the call's name or the shown result: %s", r.body)
			}
		})

		t.Run("the transcript", func(t *testing.T) {
			r := e.raw(t, "GET", "/v1/tenants/shop/dialogs/"+d.ID, pk.Key, "", "Origin", site)
			if r.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", r.StatusCode, r.body)
			}
			mustHide(t, r.body, hidden)
			var dd apiclient.DialogDetail
			json.Unmarshal([]byte(r.body), &dd)
			n := 0
			for _, c := range dd.ToolCalls {
				if c.Name == "lookup_order" {
					n++
					if string(c.Arguments) != `{}` || c.Result != "" || c.IsError {
						t.Errorf("the hidden call in the transcript: %+v", c)
					}
				}
			}
			if n != 2 {
				t.Errorf("%d lookup_order calls in the transcript; want both, by name", n)
			}
		})

		t.Run("an sk_ caller sees everything", func(t *testing.T) {
			r := e.raw(t, "GET", "/v1/tenants/shop/dialogs/"+d.ID, e.key, "")
			for _, s := range hidden {
				if !strings.Contains(r.body, s) {
					t.Errorf("the admin's transcript lacks %q: %s", s, r.body)
				}
			}
		})
	})
}

func mustHide(t *testing.T, body string, hidden []string) {
	t.Helper()
	for _, s := range hidden {
		if strings.Contains(body, s) {
			t.Errorf("an end user sees %q: %s", s, body)
		}
	}
}
