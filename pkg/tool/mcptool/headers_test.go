package mcptool_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/redact/redacttest"
	"github.com/parleyhq/parley/pkg/tool/mcptool"
)

func TestHeadersCarryDialogVarsAndSecrets(t *testing.T) {
	srv := startHTTPServer(t, false)
	pool := newPool(t, mcptool.Options{HTTPClient: outboundClient(t, srv.URL)})
	server := botconfig.MCPServer{Name: "docs", Transport: botconfig.TransportHTTP, URL: srv.URL,
		Headers: map[string]string{"Authorization": "Bearer {{ secrets.docs_token }}", "X-Dialog": "{{dialog_id}}",
			"X-Literal": "{{{{raw}} <<angle>"}}
	vars := botconfig.Vars{"secrets.docs_token": "s3cr3t-value", "dialog_id": "d-42"}

	tools := mustTools(t, pool, server, vars)

	t.Run("the substituted headers, with escapes undone, reach the server", func(t *testing.T) {
		found := false
		for _, h := range srv.Headers() {
			if h.Get("Authorization") == "Bearer s3cr3t-value" && h.Get("X-Dialog") == "d-42" && h.Get("X-Literal") == "{{raw}} <angle>" {
				found = true
			}
		}
		if !found {
			t.Errorf("no request carried the substituted headers")
		}
	})
	t.Run("a secret the server echoes back escaped or encoded is redacted", func(t *testing.T) {
		res := mustCall(t, tools, "docs__whoami", `{"encoded":true}`)
		for _, sp := range redacttest.Spellings("s3cr3t-value") {
			if !strings.Contains(res.Content, sp.Name+": [redacted]\n") {
				t.Errorf("%s: not redacted", sp.Name)
			}
		}
		if strings.Contains(res.Content, "s3cr3t") || strings.Contains(res.Content, "%73%33") || strings.Contains(res.Content, "czNjcjN0") {
			t.Errorf("secret leaked into the result: %q", res.Content)
		}
	})
	t.Run("a secret the server echoes back is redacted", func(t *testing.T) {
		res := mustCall(t, tools, "docs__whoami", `{}`)
		wantContent(t, res, false, "auth=Bearer [redacted]")
		if strings.Contains(res.Content, "s3cr3t-value") {
			t.Errorf("secret leaked into the result: %q", res.Content)
		}
	})
}

func TestBadHeaderValuesAreRefusedBeforeConnecting(t *testing.T) {
	srv := startHTTPServer(t, false)
	pool := newPool(t, mcptool.Options{HTTPClient: outboundClient(t, srv.URL)})
	cases := []struct {
		name    string
		header  string
		vars    botconfig.Vars
		wantErr string
	}{
		{"a variable with no value is named in the error", "Bearer {{secrets.missing}}", nil, `uses {{secrets.missing}}, which has no value`},
		{"a value that would inject a header line is refused", "{{user_id}}", botconfig.Vars{"user_id": "bob\r\nX-Admin: 1"}, "line break"},
		{"a secret with a line break is refused without showing it", "Bearer {{secrets.t}}", botconfig.Vars{"secrets.t": "abc\ndef"}, "line break"},
		{"an argument placeholder has no meaning in a header", "Bearer <token>", nil, "arguments cannot be used here"},
		{"an unclosed placeholder is refused", "Bearer {{secrets.t", nil, "not closed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			server := botconfig.MCPServer{Name: "docs", Transport: botconfig.TransportHTTP, URL: srv.URL,
				Headers: map[string]string{"Authorization": tc.header}}
			_, err := mcptool.Tools(context.Background(), pool, tenant, server, tc.vars)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
			}
			for _, v := range tc.vars {
				if strings.Contains(err.Error(), v) {
					t.Errorf("error %q shows the value %q", err, v)
				}
			}
		})
	}
	if n := srv.sessions.Load(); n != 0 {
		t.Errorf("server saw %d sessions, want none: bad configs must fail before connecting", n)
	}
}

func TestHeadersGoOnlyToTheServersOwnOrigin(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	record := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen[name] = r.Header.Get("Authorization")
			mu.Unlock()
		})
	}
	own := httptest.NewServer(record("own"))
	defer own.Close()
	other := httptest.NewServer(record("other"))
	defer other.Close()

	policy, err := outbound.ParsePolicy([]string{"127.0.0.1/32"}, []int{portOf(t, own.URL), portOf(t, other.URL)})
	if err != nil {
		t.Fatal(err)
	}
	client := outbound.NewClient(policy, outbound.Options{})
	client.Transport = mcptool.HeaderTransport(client.Transport, map[string]string{"Authorization": "Bearer tok"}, own.URL)

	// An SSE server announces where to post messages; if it names another
	// origin, the tenant's credentials must not follow.
	for _, u := range []string{own.URL + "/sse", other.URL + "/message"} {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if seen["own"] != "Bearer tok" {
		t.Errorf("the server's own origin got Authorization %q, want the configured one", seen["own"])
	}
	if seen["other"] != "" {
		t.Errorf("another origin got Authorization %q, want none", seen["other"])
	}
}
