package httptool

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/botconfig"
)

// TestATrialShowsTheRequestSentAndTheResponseWithoutSecrets is the request
// tester's promise: the author sees the rendered request and the raw
// response, and the tenant's secret in neither, even when the server echoes
// it back in a header and the body.
func TestATrialShowsTheRequestSentAndTheResponseWithoutSecrets(t *testing.T) {
	const token = "s3cret-crm-token"
	srv := newAPIServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Echo", r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"saved": true,  "you": %q}`, r.Header.Get("Authorization"))
	})
	spec := `{"name": "save", "description": "d",
		"parameters": {"type": "object", "properties": {"email": {"type": "string"}, "seats": {"type": "integer"}}, "required": ["email"]},
		"endpoint": {"url": "{base}/contacts/<email>", "method": "POST", "query_params": {"tier": "{{customer_tier}}"},
			"headers": {"Authorization": "Bearer {{secrets.crm}}"}, "body": {"seats": "<seats>"}}}`
	tl := newTool(t, srv, spec, `[{"name": "customer_tier"}]`, botconfig.Vars{"secrets.crm": token, "customer_tier": "gold"}, Options{})

	trial, ok, err := Try(context.Background(), tl, json.RawMessage(`{"email": "a@b.example", "seats": 3}`))
	if err != nil || !ok {
		t.Fatalf("Try = ok %v, err %v", ok, err)
	}
	if srv.last(t).Header.Get("Authorization") != "Bearer "+token {
		t.Fatal("the server did not get the secret, so the test proves nothing")
	}
	req := trial.Request
	if req == nil || req.Method != "POST" || req.URL != srv.URL+"/contacts/a@b.example?tier=gold" || req.Body != `{"seats":3}` {
		t.Fatalf("request = %+v", req)
	}
	if got := req.Header.Get("Authorization"); got != "Bearer [redacted]" {
		t.Errorf("the sent Authorization header shows as %q", got)
	}
	resp := trial.Response
	if resp == nil || resp.Status != 200 || resp.Body != `{"saved": true,  "you": "Bearer [redacted]"}` {
		t.Fatalf("response = %+v", resp)
	}
	if got := resp.Header.Get("X-Echo"); got != "Bearer [redacted]" {
		t.Errorf("the echoed header shows as %q", got)
	}
	if trial.Result.IsError || trial.Result.Content != `{"saved":true,"you":"Bearer [redacted]"}` {
		t.Errorf("result = %+v; want what the model reads", trial.Result)
	}
	all := fmt.Sprintf("%+v %+v %+v", *req, *resp, trial.Result)
	if strings.Contains(all, token) {
		t.Errorf("the trial shows the secret: %s", all)
	}
}

// TestATrialOfARefusedDestinationHasNoResponse: the outbound policy still
// applies, and the author reads why in the result.
func TestATrialOfARefusedDestinationHasNoResponse(t *testing.T) {
	srv := newAPIServer(t, nil)
	other := newAPIServer(t, nil)
	spec := compileTool(t, other.URL, `{"name": "ping", "description": "d", "parameters": {"type": "object", "properties": {}},
		"endpoint": {"url": "{base}/ping"}}`, "")
	tl, err := New(spec, clientFor(t, srv), nil, Options{MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	trial, _, err := Try(context.Background(), tl, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if trial.Request == nil || trial.Response != nil || !trial.Result.IsError || !strings.Contains(trial.Result.Content, "refused") {
		t.Errorf("trial = %+v; want the request, no response and a refusal", trial)
	}
	if other.count() != 0 {
		t.Error("the refused server was reached")
	}
}
