package httptool

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/parleyhq/parley/pkg/botconfig"
)

// dialogVars are the variables of the dialog every templating case runs in.
var dialogVars = botconfig.Vars{
	"dialog_id": "dlg_42", "tenant_id": "ten_7", "bot_id": "bot_3", "chatbot_id": "acme-support",
	"user_id": "usr_9", "channel": "widget", "locale": "en-GB", "now": "2026-11-22T10:00:00Z",
	"customer_tier":     "gold",
	"secrets.crm_token": "tok-S3CRET-crm-0001",
}

const customerTierVar = `[{"name": "customer_tier", "description": "Plan of the customer"}]`

func TestTemplatingEndToEnd(t *testing.T) {
	cases := []struct {
		name  string
		tool  string
		args  string
		check func(t *testing.T, r received)
	}{
		{
			name: "a body value that is exactly one placeholder keeps the argument's JSON type",
			tool: `{"name": "save", "description": "d", "parameters": {"type": "object", "properties": {
				"email": {"type": "string"}, "seats": {"type": "integer"}, "vip": {"type": "boolean"},
				"tags": {"type": "array", "items": {"type": "string"}}, "address": {"type": "object"}}},
				"endpoint": {"url": "{base}/contacts", "method": "POST",
				"body": {"email": "<email>", "seats": "<seats>", "vip": "<vip>", "tags": "<tags>", "address": "<address>"}}}`,
			args: `{"email": "a@example.com", "seats": 3, "vip": true, "tags": ["x", "y"], "address": {"city": "Oslo"}}`,
			check: func(t *testing.T, r received) {
				jsonEqual(t, r.Body, `{"email": "a@example.com", "seats": 3, "vip": true, "tags": ["x", "y"], "address": {"city": "Oslo"}}`)
				if ct := r.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type = %q", ct)
				}
			},
		},
		{
			name: "a placeholder inside a longer string is stringified",
			tool: `{"name": "note", "description": "d", "parameters": {"type": "object", "properties": {
				"seats": {"type": "integer"}, "vip": {"type": "boolean"}}},
				"endpoint": {"url": "{base}/notes", "method": "POST", "body": {"text": "Seats: <seats>, VIP: <vip>"}}}`,
			args:  `{"seats": 12, "vip": false}`,
			check: func(t *testing.T, r received) { jsonEqual(t, r.Body, `{"text": "Seats: 12, VIP: false"}`) },
		},
		{
			name: "a path value is path-escaped and stays inside its segment",
			tool: `{"name": "get_order", "description": "d", "parameters": {"type": "object", "properties": {
				"order_id": {"type": "string"}}, "required": ["order_id"]},
				"endpoint": {"url": "{base}/orders/<order_id>/items"}}`,
			args: `{"order_id": "a/b c?d#e%"}`,
			check: func(t *testing.T, r received) {
				if want := "/orders/a%2Fb%20c%3Fd%23e%25/items"; r.RequestURI != want {
					t.Errorf("request URI = %q, want %q", r.RequestURI, want)
				}
			},
		},
		{
			name: "a query value is query-escaped and cannot add parameters",
			tool: `{"name": "search", "description": "d", "parameters": {"type": "object", "properties": {
				"q": {"type": "string"}}, "required": ["q"]},
				"endpoint": {"url": "{base}/search", "query_params": {"q": "<q>", "limit": "10"}}}`,
			args: `{"q": "boots & socks=1 +tax"}`,
			check: func(t *testing.T, r received) {
				if got := r.Query["q"]; len(got) != 1 || got[0] != "boots & socks=1 +tax" {
					t.Errorf("q = %q", got)
				}
				if _, injected := r.Query["socks"]; injected || r.Query.Get("limit") != "10" || len(r.Query) != 2 {
					t.Errorf("query = %v, want exactly q and limit", r.Query)
				}
			},
		},
		{
			name: "an optional argument the model left out disappears from body and query",
			tool: `{"name": "save", "description": "d", "parameters": {"type": "object", "properties": {
				"email": {"type": "string"}, "name": {"type": "string"}, "seats": {"type": "integer"}}, "required": ["email"]},
				"endpoint": {"url": "{base}/contacts", "method": "POST", "query_params": {"name": "<name>", "src": "chat"},
				"body": {"email": "<email>", "name": "<name>", "seats": "<seats>"}}}`,
			args: `{"email": "a@example.com"}`,
			check: func(t *testing.T, r received) {
				jsonEqual(t, r.Body, `{"email": "a@example.com"}`)
				if _, present := r.Query["name"]; present || r.Query.Get("src") != "chat" {
					t.Errorf("query = %v, want only src", r.Query)
				}
			},
		},
		{
			name: "context and system variables fill headers, query and body",
			tool: `{"name": "ctx", "description": "d", "parameters": {"type": "object", "properties": {}},
				"endpoint": {"url": "{base}/ctx", "method": "POST",
				"headers": {"X-Dialog": "{{dialog_id}}", "X-Tenant": "{{ tenant_id }}"},
				"query_params": {"tier": "{{customer_tier}}", "channel": "{{channel}}"},
				"body": {"user": "{{user_id}}", "greeting": "Hello from {{chatbot_id}} ({{locale}})"}}}`,
			args: `{}`,
			check: func(t *testing.T, r received) {
				if r.Header.Get("X-Dialog") != "dlg_42" || r.Header.Get("X-Tenant") != "ten_7" {
					t.Errorf("headers = %v", r.Header)
				}
				if r.Query.Get("tier") != "gold" || r.Query.Get("channel") != "widget" {
					t.Errorf("query = %v", r.Query)
				}
				jsonEqual(t, r.Body, `{"user": "usr_9", "greeting": "Hello from acme-support (en-GB)"}`)
			},
		},
		{
			name: "a secret reaches the server in its header",
			tool: `{"name": "crm", "description": "d", "parameters": {"type": "object", "properties": {}},
				"endpoint": {"url": "{base}/me", "headers": {"Authorization": "Bearer {{secrets.crm_token}}"}}}`,
			args: `{}`,
			check: func(t *testing.T, r received) {
				if got := r.Header.Get("Authorization"); got != "Bearer tok-S3CRET-crm-0001" {
					t.Errorf("Authorization = %q", got)
				}
			},
		},
		{
			name: "the seed sentinel is filled from the variable its key names",
			tool: `{"name": "seed", "description": "d", "parameters": {"type": "object", "properties": {"email": {"type": "string"}}},
				"endpoint": {"url": "{base}/seed", "method": "POST", "query_params": {"chatbotId": "todo_autofill_by_system"},
				"body": {"email": "<email>", "dialogId": "todo_autofill_by_system", "userId": "todo_autofill_by_system",
				"tenantId": "todo_autofill_by_system", "customer_tier": "todo_autofill_by_system"}}}`,
			args: `{"email": "a@example.com"}`,
			check: func(t *testing.T, r received) {
				jsonEqual(t, r.Body, `{"email": "a@example.com", "dialogId": "dlg_42", "userId": "usr_9", "tenantId": "ten_7", "customer_tier": "gold"}`)
				if r.Query.Get("chatbotId") != "acme-support" {
					t.Errorf("query = %v", r.Query)
				}
			},
		},
		{
			name: "doubled delimiters are literal text",
			tool: `{"name": "lit", "description": "d", "parameters": {"type": "object", "properties": {}},
				"endpoint": {"url": "{base}/lit", "method": "POST", "body": {"html": "<<b>bold<</b>", "mustache": "{{{{name}}"}}}`,
			args: `{}`,
			check: func(t *testing.T, r received) {
				jsonEqual(t, r.Body, `{"html": "<b>bold</b>", "mustache": "{{name}}"}`)
			},
		},
		{
			name: "the configured method is used",
			tool: `{"name": "del", "description": "d", "parameters": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
				"endpoint": {"url": "{base}/items/<id>", "method": "DELETE"}}`,
			args: `{"id": "7"}`,
			check: func(t *testing.T, r received) {
				if r.Method != "DELETE" || r.RequestURI != "/items/7" || r.Body != "" {
					t.Errorf("got %s %s with body %q", r.Method, r.RequestURI, r.Body)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newAPIServer(t, nil)
			tl := newTool(t, srv, tc.tool, customerTierVar, dialogVars, Options{})
			res := call(t, tl, tc.args)
			if res.IsError {
				t.Fatalf("is_error result: %s", res.Content)
			}
			tc.check(t, srv.last(t))
		})
	}
}

func TestRenderFailuresNeverReachTheServer(t *testing.T) {
	cases := []struct {
		name, tool, args, want string
		vars                   botconfig.Vars
	}{
		{
			name: "a header value with a line break is refused",
			tool: `{"name": "h", "description": "d", "parameters": {"type": "object", "properties": {"name": {"type": "string"}}},
				"endpoint": {"url": "{base}/h", "headers": {"X-Name": "<name>"}}}`,
			args: `{"name": "x\r\nX-Injected: 1"}`, want: "line break", vars: dialogVars,
		},
		{
			name: "a secret the tenant has not set is named, not guessed",
			tool: `{"name": "s", "description": "d", "parameters": {"type": "object", "properties": {}},
				"endpoint": {"url": "{base}/s", "headers": {"Authorization": "Bearer {{secrets.missing_token}}"}}}`,
			args: `{}`, want: `secret "missing_token" is not set`, vars: dialogVars,
		},
		{
			name: "a dot segment in the path is refused",
			tool: `{"name": "p", "description": "d", "parameters": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
				"endpoint": {"url": "{base}/files/<id>"}}`,
			args: `{"id": ".."}`, want: "cannot be", vars: dialogVars,
		},
		{
			name: "a value that makes a dot segment with the literal text beside it is refused",
			tool: `{"name": "p", "description": "d", "parameters": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
				"endpoint": {"url": "{base}/files/<id>.."}}`,
			args: `{"id": "x/"}`, want: "leaving the endpoint's path", vars: dialogVars,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newAPIServer(t, nil)
			res := call(t, newTool(t, srv, tc.tool, "", tc.vars, Options{}), tc.args)
			if !res.IsError || !strings.Contains(res.Content, tc.want) {
				t.Fatalf("result = %+v, want an error saying %q", res, tc.want)
			}
			if srv.count() != 0 || srv.conns.Load() != 0 {
				t.Fatal("the server was contacted")
			}
		})
	}
}

// TestAPathValueCannotClimbOutOfTheEndpointsPath sends, as a <param> of the
// URL path, what a model (or a prompt injection) would send to reach
// another resource of the API: dot segments written plainly, with encoded
// slashes or dots, encoded once or twice. A server that decodes the path
// (once, as most do, or twice, as some proxies in front of one do) and
// resolves dot segments must still see a path under /api/orders/, or no
// request at all.
func TestAPathValueCannotClimbOutOfTheEndpointsPath(t *testing.T) {
	const base = "/api/orders/"
	climbs := []string{
		"../admin", "../../admin", "a/../../admin", "./../admin", `..\admin`, "x/..",
		"..%2Fadmin", "..%2fadmin", "%2e%2e%2Fadmin", "%2e%2e", "%2E%2E/admin", ".%2e/admin", "%2e",
		"..%252Fadmin", "%252e%252e%252fadmin", "..%5Cadmin",
	}
	var mu sync.Mutex
	var paths []string // the paths the server saw, decoded once
	srv := newAPIServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		_, _ = io.WriteString(w, "ok")
	})
	tl := newTool(t, srv, `{"name": "order", "description": "d",
		"parameters": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
		"endpoint": {"url": "{base}/api/orders/<id>/status"}}`, "", dialogVars, Options{})
	for _, id := range climbs {
		t.Run(id+" stays under the endpoint's path", func(t *testing.T) {
			mu.Lock()
			paths = nil
			mu.Unlock()
			args, _ := json.Marshal(map[string]string{"id": id})
			res := call(t, tl, string(args))
			mu.Lock()
			defer mu.Unlock()
			for _, p := range paths {
				twice, err := url.PathUnescape(p)
				if err != nil {
					twice = p
				}
				for _, seen := range []string{p, twice} {
					resolved := path.Clean(strings.ReplaceAll(seen, `\`, "/"))
					if !strings.HasPrefix(resolved, base) {
						t.Errorf("the server saw %q, which resolves to %q outside %s", seen, resolved, base)
					}
				}
			}
			if len(paths) == 0 && (!res.IsError || !strings.Contains(res.Content, "id")) {
				t.Errorf("result = %+v; want an error naming the argument", res)
			}
		})
	}
	for _, id := range []string{"A-1001", "a b", "x/y", "..foo", "v1.2", "%"} {
		t.Run(id+" is sent as written", func(t *testing.T) {
			mu.Lock()
			paths = nil
			mu.Unlock()
			args, _ := json.Marshal(map[string]string{"id": id})
			if res := call(t, tl, string(args)); res.IsError {
				t.Fatalf("result = %+v", res)
			}
			mu.Lock()
			defer mu.Unlock()
			if want := base + id + "/status"; len(paths) != 1 || paths[0] != want {
				t.Errorf("the server saw %q, want %q", paths, want)
			}
		})
	}
}
