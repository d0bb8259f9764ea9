package botconfig

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

const renderParams = `{"type": "object", "properties": {
  "id": {"type": "string"}, "q": {"type": "string"}, "seats": {"type": "integer"},
  "vip": {"type": "boolean"}, "tags": {"type": "array"}, "address": {"type": "object"},
  "note": {"type": "string"}, "big": {"type": "integer"}
}, "required": ["id"]}`

const renderVariables = `"context_variables": [
  {"name": "tier", "default": "standard"},
  {"name": "account", "required": true},
  {"name": "region"}
]`

// renderCase renders one endpoint with args and vars and checks one part of
// the result.
type renderCase struct {
	name     string
	endpoint string
	args     string
	vars     Vars
	url      string            // want the URL (when set)
	headers  map[string]string // want these headers ("" = absent)
	body     string            // want the body (when set)
	err      string            // want an error containing this
}

func baseVars() Vars {
	return Vars{"dialog_id": "dlg_1", "tenant_id": "ten_1", "channel": "web chat", "account": "acc-9", "secrets.token": "s3cr3t"}
}

func runRenderCases(t *testing.T, cases []renderCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := mustTemplate(t, renderParams, tt.endpoint, renderVariables)
			vars := baseVars()
			for k, v := range tt.vars {
				vars[k] = v
			}
			req, err := tmpl.Render([]byte(tt.args), vars)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if tt.url != "" && req.URL != tt.url {
				t.Errorf("URL = %s\nwant  %s", req.URL, tt.url)
			}
			for k, want := range tt.headers {
				if got := req.Header.Get(k); got != want {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
			if tt.body != "" && string(req.Body) != tt.body {
				t.Errorf("body = %s\nwant   %s", req.Body, tt.body)
			}
		})
	}
}

func TestRenderPathValuesStayInsideTheirSegment(t *testing.T) {
	runRenderCases(t, []renderCase{
		{name: "a slash in a value is escaped, not a new segment", endpoint: `{"url": "https://api.example.com/items/<id>/detail"}`, args: `{"id": "a/b c"}`, url: "https://api.example.com/items/a%2Fb%20c/detail"},
		{name: "a dot segment inside a value is refused, since servers decode %2F", endpoint: `{"url": "https://api.example.com/items/<id>/detail"}`, args: `{"id": "a/../b"}`, err: `<id> cannot hold a "." or ".." path segment`},
		{name: "an encoded dot segment is refused", endpoint: `{"url": "https://api.example.com/items/<id>"}`, args: `{"id": "%2e%2e%2fadmin"}`, err: `<id> cannot hold a "." or ".." path segment`},
		{name: "a question mark in a value cannot start the query", endpoint: `{"url": "https://api.example.com/items/<id>"}`, args: `{"id": "x?admin=1#f"}`, url: "https://api.example.com/items/x%3Fadmin=1%23f"},
		{name: "a dot-dot value is refused", endpoint: `{"url": "https://api.example.com/items/<id>"}`, args: `{"id": ".."}`, err: `<id> cannot be ".." in the URL path`},
		{name: "an empty value is refused", endpoint: `{"url": "https://api.example.com/items/<id>"}`, args: `{"id": ""}`, err: "<id> has no value but the URL path needs one"},
		{name: "a variable with no value is refused", endpoint: `{"url": "https://api.example.com/regions/{{region}}/<id>"}`, args: `{"id": "1"}`, err: "{{region}} has no value"},
		{name: "literal path text is kept as written", endpoint: `{"url": "https://api.example.com/a%20b/<id>"}`, args: `{"id": "é"}`, url: "https://api.example.com/a%20b/%C3%A9"},
	})
}

func TestRenderQueryValuesAreEscapedAndOptionalOnesDropped(t *testing.T) {
	runRenderCases(t, []renderCase{
		{name: "query_params values are query-escaped", endpoint: `{"url": "https://api.example.com/s", "query_params": {"q": "<q>"}}`, args: `{"id": "1", "q": "a&b=c d"}`, url: "https://api.example.com/s?q=a%26b%3Dc+d"},
		{name: "query_params literal text is escaped too", endpoint: `{"url": "https://api.example.com/s", "query_params": {"source": "{{channel}}", "x y": "1&2"}}`, args: `{"id": "1"}`, url: "https://api.example.com/s?source=web+chat&x+y=1%262"},
		{name: "query_params come in key order", endpoint: `{"url": "https://api.example.com/s", "query_params": {"b": "2", "a": "1", "c": "3"}}`, args: `{"id": "1"}`, url: "https://api.example.com/s?a=1&b=2&c=3"},
		{name: "URL query values are escaped and literals kept", endpoint: `{"url": "https://api.example.com/s?fixed=a%20b&q=<q>"}`, args: `{"id": "1", "q": "x&y"}`, url: "https://api.example.com/s?fixed=a%20b&q=x%26y"},
		{name: "URL query comes before query_params", endpoint: `{"url": "https://api.example.com/s?v=2", "query_params": {"q": "<q>"}}`, args: `{"id": "1", "q": "z"}`, url: "https://api.example.com/s?v=2&q=z"},
		{name: "an omitted optional argument drops its query_params key", endpoint: `{"url": "https://api.example.com/s", "query_params": {"q": "<q>", "k": "1"}}`, args: `{"id": "1"}`, url: "https://api.example.com/s?k=1"},
		{name: "an omitted optional argument drops its URL query key", endpoint: `{"url": "https://api.example.com/s?q=<q>&k=1"}`, args: `{"id": "1"}`, url: "https://api.example.com/s?k=1"},
		{name: "a null argument counts as omitted", endpoint: `{"url": "https://api.example.com/s", "query_params": {"q": "<q>"}}`, args: `{"id": "1", "q": null}`, url: "https://api.example.com/s"},
		{name: "an omitted argument inside a longer value renders empty", endpoint: `{"url": "https://api.example.com/s", "query_params": {"q": "tag:<q>"}}`, args: `{"id": "1"}`, url: "https://api.example.com/s?q=tag%3A"},
		{name: "a bare flag stays bare", endpoint: `{"url": "https://api.example.com/s?verbose"}`, args: `{"id": "1"}`, url: "https://api.example.com/s?verbose"},
		{name: "the sentinel fills a query value from its key", endpoint: `{"url": "https://api.example.com/s?dialogId=todo_autofill_by_system", "query_params": {"tenant_id": "todo_autofill_by_system"}}`, args: `{"id": "1"}`, url: "https://api.example.com/s?dialogId=dlg_1&tenant_id=ten_1"},
		{name: "a boolean argument is written as true", endpoint: `{"url": "https://api.example.com/s", "query_params": {"vip": "<vip>"}}`, args: `{"id": "1", "vip": true}`, url: "https://api.example.com/s?vip=true"},
	})
}

func TestRenderHeadersRejectLineBreaks(t *testing.T) {
	runRenderCases(t, []renderCase{
		{name: "a header value is filled", endpoint: `{"url": "https://api.example.com/", "headers": {"Authorization": "Bearer {{secrets.token}}", "x-account": "{{account}}"}}`, args: `{"id": "1"}`, headers: map[string]string{"Authorization": "Bearer s3cr3t", "X-Account": "acc-9"}},
		{name: "a line break from an argument is refused", endpoint: `{"url": "https://api.example.com/", "headers": {"X-Note": "n=<note>"}}`, args: `{"id": "1", "note": "a\r\nX-Admin: 1"}`, err: `render header "X-Note": a value contains a line break`},
		{name: "a line break from a variable is refused", endpoint: `{"url": "https://api.example.com/", "headers": {"X-Tier": "{{tier}}"}}`, args: `{"id": "1"}`, vars: Vars{"tier": "gold\nX-Admin: 1"}, err: "line break"},
		{name: "a header that is one omitted argument is left out", endpoint: `{"url": "https://api.example.com/", "headers": {"X-Note": "<note>"}}`, args: `{"id": "1"}`, headers: map[string]string{"X-Note": ""}},
		{name: "a variable's default fills a header", endpoint: `{"url": "https://api.example.com/", "headers": {"X-Tier": "{{tier}}"}}`, args: `{"id": "1"}`, headers: map[string]string{"X-Tier": "standard"}},
		{name: "a missing secret names the secret", endpoint: `{"url": "https://api.example.com/", "headers": {"X-Key": "{{secrets.other}}"}}`, args: `{"id": "1"}`, err: `secret "other" is not set for this tenant`},
		{name: "a missing required variable is an error", endpoint: `{"url": "https://api.example.com/", "headers": {"X-Account": "{{account}}"}}`, args: `{"id": "1"}`, vars: Vars{"account": ""}, err: `context variable "account" is required`},
	})
}

func TestRenderBodyKeepsJSONTypes(t *testing.T) {
	ep := func(body string) string {
		return `{"url": "https://api.example.com/", "method": "POST", "body": ` + body + `}`
	}
	runRenderCases(t, []renderCase{
		{name: "an exact placeholder keeps an integer", endpoint: ep(`{"seats": "<seats>"}`), args: `{"id": "1", "seats": 3}`, body: `{"seats":3}`},
		{name: "an exact placeholder keeps a boolean, array and object", endpoint: ep(`{"vip": "<vip>", "tags": "<tags>", "address": "<address>"}`), args: `{"id": "1", "vip": false, "tags": ["a", 1], "address": {"city": "Oslo"}}`, body: `{"vip":false,"tags":["a",1],"address":{"city":"Oslo"}}`},
		{name: "large numbers keep their exact text", endpoint: ep(`{"big": "<big>"}`), args: `{"id": "1", "big": 12345678901234567890}`, body: `{"big":12345678901234567890}`},
		{name: "inside a longer string a value is stringified", endpoint: ep(`{"note": "seats: <seats>, vip: <vip>, id: <id>"}`), args: `{"id": "A\"1", "seats": 3, "vip": true}`, body: `{"note":"seats: 3, vip: true, id: A\"1"}`},
		{name: "an omitted optional argument removes its key", endpoint: ep(`{"id": "<id>", "note": "<note>", "fixed": 1}`), args: `{"id": "1"}`, body: `{"id":"1","fixed":1}`},
		{name: "an omitted argument in an array becomes null", endpoint: ep(`{"list": ["<note>", "x"]}`), args: `{"id": "1"}`, body: `{"list":[null,"x"]}`},
		{name: "a variable is always a string", endpoint: ep(`{"d": "{{dialog_id}}", "t": "{{tier}}"}`), args: `{"id": "1"}`, body: `{"d":"dlg_1","t":"standard"}`},
		{name: "the sentinel fills each key from its variable", endpoint: ep(`{"dialogId": "todo_autofill_by_system", "tenantId": "todo_autofill_by_system", "account": "todo_autofill_by_system"}`), args: `{"id": "1"}`, body: `{"dialogId":"dlg_1","tenantId":"ten_1","account":"acc-9"}`},
		{name: "escapes give literal < and {{ without HTML escaping", endpoint: ep(`{"html": "<<b>{{{{x}} & <id>"}`), args: `{"id": "1"}`, body: `{"html":"<b>{{x}} & 1"}`},
		{name: "nested objects keep the author's key order", endpoint: ep(`{"z": {"b": "<id>", "a": [1, {"y": null}]}, "m": true}`), args: `{"id": "1"}`, body: `{"z":{"b":"1","a":[1,{"y":null}]},"m":true}`},
		{name: "a body that is one string is a JSON string", endpoint: ep(`"<id>"`), args: `{"id": "1"}`, body: `"1"`},
		{name: "a body sets the JSON content type", endpoint: ep(`{}`), args: `{"id": "1"}`, headers: map[string]string{"Content-Type": "application/json"}},
		{name: "an author's content type is kept", endpoint: `{"url": "https://api.example.com/", "headers": {"Content-Type": "application/vnd.api+json"}, "body": {}}`, args: `{"id": "1"}`, headers: map[string]string{"Content-Type": "application/vnd.api+json"}},
		{name: "arguments that are not an object are refused", endpoint: ep(`{}`), args: `[1]`, err: "arguments must be a JSON object"},
	})
}

func TestRenderFillsChatbotIDFromTheConfig(t *testing.T) {
	data := strings.Replace(toolDoc(`{"type": "object"}`, `{"url": "https://api.example.com/bots/{{chatbot_id}}", "body": {"chatbotId": "todo_autofill_by_system"}}`),
		`"name": "Test Bot"`, `"name": "Test Bot", "chatbot_id": "acme-support"`, 1)
	tmpl := mustCompile(t, data).Tools[0].Endpoint
	req, err := tmpl.Render(nil, Vars{})
	if err != nil {
		t.Fatal(err)
	}
	if req.URL != "https://api.example.com/bots/acme-support" || string(req.Body) != `{"chatbotId":"acme-support"}` {
		t.Fatalf("request = %s %s", req.URL, req.Body)
	}
	if req, _ := tmpl.Render(nil, Vars{"chatbot_id": "from-dialog"}); req.URL != "https://api.example.com/bots/from-dialog" {
		t.Fatalf("the dialog's chatbot_id should win, got %s", req.URL)
	}
}

func TestRenderMethodAndTimeoutDefaults(t *testing.T) {
	tests := []struct {
		name     string
		endpoint string
		method   string
		timeout  time.Duration
	}{
		{"no body defaults to GET and 30 seconds", `{"url": "https://api.example.com/"}`, http.MethodGet, DefaultEndpointTimeout},
		{"a body defaults to POST", `{"url": "https://api.example.com/", "body": {"a": 1}}`, http.MethodPost, DefaultEndpointTimeout},
		{"an explicit method and timeout are kept", `{"url": "https://api.example.com/", "method": "DELETE", "timeout": 2.5}`, http.MethodDelete, 2500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := mustTemplate(t, renderParams, tt.endpoint, renderVariables).Render([]byte(`{"id": "1"}`), baseVars())
			if err != nil {
				t.Fatal(err)
			}
			if req.Method != tt.method || req.Timeout != tt.timeout {
				t.Fatalf("method, timeout = %s, %v; want %s, %v", req.Method, req.Timeout, tt.method, tt.timeout)
			}
		})
	}
}

func TestRenderErrorsAndRedactNeverLeakSecrets(t *testing.T) {
	tmpl := mustTemplate(t, renderParams, `{"url": "https://api.example.com/<id>?key={{secrets.token}}", "headers": {"Authorization": "Bearer {{secrets.token}}"}}`, renderVariables)
	t.Run("a secret with a line break fails without echoing it", func(t *testing.T) {
		vars := baseVars()
		vars["secrets.token"] = "top-secret\nX-Evil: 1"
		_, err := tmpl.Render([]byte(`{"id": "1"}`), vars)
		if err == nil || strings.Contains(err.Error(), "top-secret") {
			t.Fatalf("err = %v, want an error without the secret", err)
		}
	})
	t.Run("Redact scrubs raw and URL-escaped secret values", func(t *testing.T) {
		vars := baseVars()
		vars["secrets.token"] = "p@ss word/1"
		req, err := tmpl.Render([]byte(`{"id": "1"}`), vars)
		if err != nil {
			t.Fatal(err)
		}
		msg := req.Redact("GET " + req.URL + " with " + req.Header.Get("Authorization"))
		if strings.Contains(msg, "p@ss") || strings.Contains(msg, "p%40ss") || strings.Count(msg, "[redacted]") != 2 {
			t.Fatalf("redacted = %q", msg)
		}
	})
	t.Run("Redact on a nil request returns the text", func(t *testing.T) {
		var req *RenderedRequest
		if got := req.Redact("x"); got != "x" {
			t.Fatalf("Redact = %q", got)
		}
	})
}

func TestRenderIsSafeForConcurrentUse(t *testing.T) {
	tmpl := mustTemplate(t, renderParams, `{"url": "https://api.example.com/<id>", "body": {"id": "<id>"}}`, renderVariables)
	done := make(chan string)
	for i := 0; i < 8; i++ {
		go func() {
			req, err := tmpl.Render([]byte(`{"id": "x"}`), baseVars())
			if err != nil {
				done <- err.Error()
				return
			}
			done <- string(req.Body)
		}()
	}
	for i := 0; i < 8; i++ {
		if got := <-done; got != `{"id":"x"}` {
			t.Fatalf("concurrent render = %s", got)
		}
	}
}

func TestSeedBracePlaceholdersRenderLikeAngleBrackets(t *testing.T) {
	runRenderCases(t, []renderCase{
		{name: "{id} in the path is path-escaped", endpoint: `{"url": "https://api.example.com/items/{id}"}`,
			args: `{"id": "a/b c"}`, url: "https://api.example.com/items/a%2Fb%20c"},
		{name: "{q} in query_params is query-escaped", endpoint: `{"url": "https://api.example.com/search", "query_params": {"q": "{q}", "id": "{id}"}}`,
			args: `{"id": "1", "q": "a&b"}`, url: "https://api.example.com/search?id=1&q=a%26b"},
		{name: "a body value that is exactly {seats} keeps the argument's type", endpoint: `{"url": "https://api.example.com/x", "method": "POST", "body": {"seats": "{seats}", "vip": "{vip}", "id": "{id}"}}`,
			args: `{"id": "7", "seats": 3, "vip": true}`, body: `{"seats":3,"vip":true,"id":"7"}`},
		{name: "an optional {note} the model left out drops its key", endpoint: `{"url": "https://api.example.com/x", "method": "POST", "body": {"id": "{id}", "note": "{note}"}}`,
			args: `{"id": "7"}`, body: `{"id":"7"}`},
		{name: "{id} inside a longer string is stringified", endpoint: `{"url": "https://api.example.com/x", "method": "POST", "body": {"ref": "order-{id}-{{channel}}"}}`,
			args: `{"id": "7"}`, body: `{"ref":"order-7-web chat"}`},
		{name: "JSON-looking text and the escape stay literal", endpoint: `{"url": "https://api.example.com/x", "method": "POST", "body": {"tpl": "{\"id\": {id}} \\{id}"}}`,
			args: `{"id": "7"}`, body: `{"tpl":"{\"id\": 7} {id}"}`},
		{name: "{id} in a header", endpoint: `{"url": "https://api.example.com/x", "headers": {"X-Id": "id-{id}"}}`,
			args: `{"id": "7"}`, headers: map[string]string{"X-Id": "id-7"}},
	})
}
