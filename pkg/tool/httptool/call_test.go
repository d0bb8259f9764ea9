package httptool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/tool"
)

// getTool is a GET endpoint at path with no arguments.
func getTool(path string) string {
	return `{"name": "fetch", "description": "d", "parameters": {"type": "object", "properties": {}},
		"endpoint": {"url": "{base}` + path + `"}}`
}

func TestResponses(t *testing.T) {
	big := strings.Repeat("0123456789", 10_000) // 100,000 bytes
	cases := []struct {
		name          string
		handle        http.HandlerFunc
		opts          Options
		wantError     bool
		wantStatus    int
		wantContent   string // exact, unless wantContains is set
		wantContains  []string
		wantTruncated bool
	}{
		{
			name: "a JSON response is compacted",
			handle: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				_, _ = io.WriteString(w, "{\n  \"order\": \"A1\",\n  \"items\": [ 1, 2 ]\n}\n")
			},
			wantStatus: 200, wantContent: `{"order":"A1","items":[1,2]}`,
		},
		{
			name: "JSON without a content type is recognised and compacted",
			handle: func(w http.ResponseWriter, r *http.Request) {
				w.Header()["Content-Type"] = nil
				_, _ = io.WriteString(w, "[ {\"a\": 1} ]")
			},
			wantStatus: 200, wantContent: `[{"a":1}]`,
		},
		{
			name: "a text response is passed through",
			handle: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				_, _ = io.WriteString(w, "Your order ships Tuesday.")
			},
			wantStatus: 200, wantContent: "Your order ships Tuesday.",
		},
		{
			name:       "an empty success says so",
			handle:     func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) },
			wantStatus: 204, wantContent: "HTTP 204 with an empty body",
		},
		{
			name: "a binary response is described, not dumped",
			handle: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "image/png")
				_, _ = w.Write([]byte{0x89, 'P', 'N', 'G', 0, 1, 2, 3})
			},
			wantStatus: 200, wantContent: "[binary response: image/png, 8 bytes, not shown]",
		},
		{
			name: "a response over 64 KiB is cut and marked",
			handle: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				_, _ = io.WriteString(w, big)
			},
			wantStatus: 200, wantTruncated: true,
			wantContent: big[:65536] + "\n[truncated: the response is longer than 65536 bytes]",
		},
		{
			name: "the body cap is configurable and never splits a character",
			handle: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				_, _ = io.WriteString(w, "abcdéfgh") // é is 2 bytes at offsets 4-5
			},
			opts:       Options{MaxBodyBytes: 5},
			wantStatus: 200, wantTruncated: true,
			wantContent: "abcd\n[truncated: the response is longer than 5 bytes]",
		},
		{
			name: "a truncated JSON response is kept raw rather than failing to compact",
			handle: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"items": [1, 2, 3, 4, 5]}`)
			},
			opts:       Options{MaxBodyBytes: 10},
			wantStatus: 200, wantTruncated: true,
			wantContent: `{"items": ` + "\n[truncated: the response is longer than 10 bytes]",
		},
		{
			name: "a 404 is an error with the status and the API's message",
			handle: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				_, _ = io.WriteString(w, `{ "error": "no such order" }`)
			},
			wantError: true, wantStatus: 404,
			wantContains: []string{"HTTP 404 Not Found from GET ", "/orders", `{"error":"no such order"}`},
		},
		{
			name: "a long error page is cut to an excerpt",
			handle: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = io.WriteString(w, "<html>"+big+"</html>")
			},
			wantError: true, wantStatus: 500, wantTruncated: true,
			wantContains: []string{"HTTP 500 Internal Server Error", "<html>0123", " [...]"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newAPIServer(t, tc.handle)
			res := call(t, newTool(t, srv, getTool("/orders"), "", dialogVars, tc.opts), `{}`)
			if res.IsError != tc.wantError {
				t.Errorf("IsError = %v, want %v (content %.200q)", res.IsError, tc.wantError, res.Content)
			}
			if res.Meta.Status != tc.wantStatus || res.Meta.Truncated != tc.wantTruncated {
				t.Errorf("Meta = %+v, want status %d truncated %v", res.Meta, tc.wantStatus, tc.wantTruncated)
			}
			if tc.wantContains == nil && res.Content != tc.wantContent {
				t.Errorf("content = %.300q\nwant      %.300q", res.Content, tc.wantContent)
			}
			for _, want := range tc.wantContains {
				if !strings.Contains(res.Content, want) {
					t.Errorf("content %.300q does not contain %q", res.Content, want)
				}
			}
			if tc.wantError && len(res.Content) > 2*errorExcerptBytes {
				t.Errorf("error content is %d bytes, want a short excerpt", len(res.Content))
			}
			if res.Meta.Duration <= 0 {
				t.Error("Meta.Duration is not set")
			}
		})
	}
}

func TestTimeouts(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := newAPIServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	slow := `{"name": "slow", "description": "d", "parameters": {"type": "object", "properties": {}},
		"endpoint": {"url": "{base}/slow", "timeout": 0.2}}`

	t.Run("the endpoint timeout ends the call with an error the model can read", func(t *testing.T) {
		res := call(t, newTool(t, srv, slow, "", dialogVars, Options{MaxRetries: -1}), `{}`)
		if !res.IsError || !strings.Contains(res.Content, "timed out after 200ms") {
			t.Fatalf("result = %+v, want a timeout error", res)
		}
	})
	t.Run("a response that stalls mid-body times out too", func(t *testing.T) {
		stall := newAPIServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "partial ")
			http.NewResponseController(w).Flush()
			select {
			case <-r.Context().Done():
			case <-release:
			}
		})
		res := call(t, newTool(t, stall, slow, "", dialogVars, Options{}), `{}`)
		if !res.IsError || !strings.Contains(res.Content, "timed out after 200ms") || res.Meta.Status != 200 {
			t.Fatalf("result = %+v, want a timeout error with status 200", res)
		}
	})
	t.Run("a timed-out GET is not retried", func(t *testing.T) {
		before := srv.count()
		call(t, newTool(t, srv, slow, "", dialogVars, Options{Backoff: time.Millisecond}), `{}`)
		if n := srv.count() - before; n != 1 {
			t.Fatalf("the server saw %d requests, want 1", n)
		}
	})
	t.Run("the caller's cancellation is returned as a Go error", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		spec := compileTool(t, srv.URL, slow, "")
		tl, _ := New(spec, clientFor(t, srv), dialogVars, Options{})
		_, err := tl.Call(ctx, json.RawMessage(`{}`))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}

func TestRetries(t *testing.T) {
	cases := []struct {
		name         string
		method       string
		failures     int
		failWith     func(w http.ResponseWriter)
		wantRequests int
		wantError    bool
	}{
		{"a GET is retried after 503 and succeeds", "GET", 2, status(503), 3, false},
		{"a PUT is retried after 502", "PUT", 1, status(502), 2, false},
		{"a DELETE is retried after 504", "DELETE", 1, status(504), 2, false},
		{"a GET gives up after the retry budget", "GET", 10, status(503), 3, true},
		{"a GET is retried after the connection drops", "GET", 1, hangUp, 2, false},
		{"a POST is never retried", "POST", 1, status(503), 1, true},
		{"a POST whose connection drops is not retried", "POST", 1, hangUp, 1, true},
		{"a PATCH is never retried", "PATCH", 1, status(502), 1, true},
		{"a GET is not retried after 500", "GET", 1, status(500), 1, true},
		{"a GET is retried at once when Retry-After says 0", "GET", 1, statusAfter(503, "0"), 2, false},
		{"a GET is not retried when Retry-After asks for an hour", "GET", 1, statusAfter(503, "3600"), 1, true},
		{"a GET is not retried after 429", "GET", 1, status(429), 1, true},
		{"a GET is not retried when Retry-After names a date an hour away", "GET", 1,
			statusAfter(503, time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)), 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int64
			srv := newAPIServer(t, func(w http.ResponseWriter, r *http.Request) {
				if int(n.Add(1)) <= tc.failures {
					tc.failWith(w)
					return
				}
				_, _ = io.WriteString(w, "done")
			})
			body := ""
			if tc.method == "POST" || tc.method == "PATCH" || tc.method == "PUT" {
				body = `, "body": {"a": 1}`
			}
			spec := `{"name": "op", "description": "d", "parameters": {"type": "object", "properties": {}},
				"endpoint": {"url": "{base}/op", "method": "` + tc.method + `"` + body + `}}`
			res := call(t, newTool(t, srv, spec, "", dialogVars, Options{Backoff: time.Millisecond}), `{}`)
			if got := srv.count(); got != tc.wantRequests {
				t.Errorf("the server saw %d requests, want %d", got, tc.wantRequests)
			}
			if res.IsError != tc.wantError {
				t.Errorf("IsError = %v, want %v (%s)", res.IsError, tc.wantError, res.Content)
			}
		})
	}
}

func status(code int) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) { w.WriteHeader(code) }
}

func statusAfter(code int, after string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", after)
		w.WriteHeader(code)
	}
}

// hangUp closes the connection without answering.
func hangUp(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

func TestRedirectsAndRefusals(t *testing.T) {
	other := newAPIServer(t, nil)
	srv := newAPIServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/old":
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
		case "/new":
			_, _ = io.WriteString(w, "moved here")
		case "/away":
			http.Redirect(w, r, other.URL+"/steal?key=tok-S3CRET-crm-0001", http.StatusFound)
		}
	})
	client := clientFor(t, srv, other) // both reachable: only the redirect rule stops /away

	t.Run("a same-origin redirect is followed", func(t *testing.T) {
		tl, _ := New(compileTool(t, srv.URL, getTool("/old"), ""), client, dialogVars, Options{})
		res := call(t, tl, `{}`)
		if res.IsError || res.Content != "moved here" {
			t.Fatalf("result = %+v", res)
		}
	})
	t.Run("a cross-origin redirect is refused and says why without the secret", func(t *testing.T) {
		tl, _ := New(compileTool(t, srv.URL, getTool("/away"), ""), client, dialogVars, Options{})
		res := call(t, tl, `{}`)
		if !res.IsError || !strings.Contains(res.Content, "only same-origin redirects") {
			t.Fatalf("result = %+v, want a redirect refusal", res)
		}
		if strings.Contains(res.Content, "S3CRET") {
			t.Errorf("content leaks the secret: %s", res.Content)
		}
		if other.count() != 0 {
			t.Error("the other origin was contacted")
		}
	})
	t.Run("a destination the policy denies is refused before connecting", func(t *testing.T) {
		strict := outbound.NewClient(outbound.Policy{ExtraPorts: []int{srv.port()}}, outbound.Options{})
		before := srv.conns.Load()
		tl, _ := New(compileTool(t, srv.URL, getTool("/new"), ""), strict, dialogVars, Options{})
		res := call(t, tl, `{}`)
		if !res.IsError || !strings.Contains(res.Content, "loopback") || !strings.Contains(res.Content, "PARLEY_OUTBOUND_ALLOW") {
			t.Fatalf("result = %+v, want a loopback refusal", res)
		}
		if srv.conns.Load() != before {
			t.Error("the denied server was contacted")
		}
	})
}

// secretVars holds secrets in forms that escape differently in URLs and JSON.
var secretVars = botconfig.Vars{
	"secrets.token":  "tok-S3CRET-0001",
	"secrets.tricky": `p@ss"w<rd>/&=+ x`,
	"secrets.unused": "never-sent-but-known-0002",
	"dialog_id":      "dlg_1",
}

var secretLeaks = []string{"tok-S3CRET-0001", `p@ss"w<rd>/&=+ x`, `p@ss\"w\u003crd\u003e/\u0026=+ x`, `p@ss\"w<rd>/&=+ x`,
	"p%40ss%22w%3Crd%3E%2F&=+%20x", "p%40ss%22w%3Crd%3E%2F%26%3D%2B+x", "never-sent-but-known-0002", "S3CRET", "never-sent"}

func TestSecretsNeverLeaveTheTool(t *testing.T) {
	echo := func(code int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			echoed := map[string]any{"headers": r.Header, "uri": r.RequestURI, "body": string(body),
				"whoami": map[string]string{"other": "never-sent-but-known-0002"}}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			_ = json.NewEncoder(w).Encode(echoed)
		}
	}
	tool := `{"name": "leaky", "description": "d", "parameters": {"type": "object", "properties": {}},
		"endpoint": {"url": "{base}/v1/{{secrets.token}}/items?key={{secrets.tricky}}", "method": "POST",
		"headers": {"Authorization": "Bearer {{secrets.token}}", "X-Key": "{{secrets.tricky}}"},
		"body": {"token": "{{secrets.tricky}}"}}}`
	for _, code := range []int{200, 403} {
		t.Run("a server echoing the request with status "+itoa(code)+" gets scrubbed", func(t *testing.T) {
			var logs bytes.Buffer
			logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			srv := newAPIServer(t, echo(code))
			res := call(t, newTool(t, srv, tool, "", secretVars, Options{Logger: logger}), `{}`)
			if got := srv.last(t).Header.Get("Authorization"); got != "Bearer tok-S3CRET-0001" {
				t.Fatalf("the server did not get the secret (Authorization %q), so the test proves nothing", got)
			}
			assertNoSecrets(t, "content", res.Content)
			assertNoSecrets(t, "logs", logs.String())
			if !strings.Contains(res.Content, "[redacted]") {
				t.Errorf("content shows no redaction: %s", res.Content)
			}
		})
	}
	t.Run("a failed request's error is scrubbed", func(t *testing.T) {
		srv := newAPIServer(t, nil)
		strict := outbound.NewClient(outbound.Policy{ExtraPorts: []int{srv.port()}}, outbound.Options{})
		tl, _ := New(compileTool(t, srv.URL, tool, ""), strict, secretVars, Options{})
		res := call(t, tl, `{}`)
		if !res.IsError {
			t.Fatalf("result = %+v, want a refusal", res)
		}
		assertNoSecrets(t, "content", res.Content)
	})
}

func assertNoSecrets(t *testing.T, where, s string) {
	t.Helper()
	for _, leak := range secretLeaks {
		if strings.Contains(s, leak) {
			t.Errorf("%s contains %q: %.500s", where, leak, s)
		}
	}
}

func TestOptionalInterfaces(t *testing.T) {
	srv := newAPIServer(t, nil)
	client := clientFor(t, srv)
	cases := []struct {
		name        string
		extra       string
		wantConfirm bool
		wantKeep    int // 0: not Ephemeral
	}{
		{"a plain tool needs no confirmation and is not ephemeral", ``, false, 0},
		{"requires_confirmation asks for a human yes/no", `, "requires_confirmation": true`, true, 0},
		{"ephemeral keeps only the latest outputs", `, "ephemeral": 2`, false, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			js := `{"name": "t", "description": "desc", "parameters": {"type": "object", "properties": {}},
				"endpoint": {"url": "{base}/x"}` + tc.extra + `}`
			tl, err := New(compileTool(t, srv.URL, js, ""), client, dialogVars, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if def := tl.Definition(); def.Name != "t" || def.Description != "desc" || len(def.Parameters) == 0 {
				t.Errorf("definition = %+v", def)
			}
			confirm, ok := tl.(tool.ConfirmationRequired)
			if !ok || confirm.RequiresConfirmation() != tc.wantConfirm {
				t.Errorf("RequiresConfirmation = %v, want %v", ok && confirm.RequiresConfirmation(), tc.wantConfirm)
			}
			eph, ok := tl.(tool.Ephemeral)
			if (tc.wantKeep == 0) == ok || (ok && eph.KeepLast() != tc.wantKeep) {
				t.Errorf("Ephemeral = %v, want keep %d", ok, tc.wantKeep)
			}
		})
	}
	t.Run("a client tool without an endpoint is not an HTTP tool", func(t *testing.T) {
		if _, err := New(botconfig.ToolSpec{Name: "c", Execution: "client"}, client, nil, Options{}); err == nil {
			t.Fatal("New accepted a spec without an endpoint")
		}
	})
	t.Run("a missing client is refused rather than defaulted", func(t *testing.T) {
		spec := compileTool(t, srv.URL, getTool("/x"), "")
		if _, err := New(spec, nil, nil, Options{}); err == nil {
			t.Fatal("New accepted a nil client")
		}
	})
}

func TestToolSetValidatesBeforeTheRequest(t *testing.T) {
	srv := newAPIServer(t, nil)
	js := `{"name": "get_order", "description": "d", "parameters": {"type": "object", "properties": {
		"order_id": {"type": "string", "pattern": "^[A-Z][0-9]+$"}}, "required": ["order_id"]},
		"endpoint": {"url": "{base}/orders/<order_id>"}}`
	set, err := tool.NewSet(nil, newTool(t, srv, js, "", dialogVars, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	if res := set.Call(context.Background(), "get_order", json.RawMessage(`{"order_id": "../admin"}`)); !res.IsError {
		t.Fatalf("invalid arguments were accepted: %+v", res)
	}
	if srv.count() != 0 {
		t.Fatal("invalid arguments reached the server")
	}
	if res := set.Call(context.Background(), "get_order", json.RawMessage(`{"order_id": "A17"}`)); res.IsError || res.Meta.Status != 200 {
		t.Fatalf("a valid call failed: %+v", res)
	}
}
