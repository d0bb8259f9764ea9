package api_test

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/store/storetest"
)

func TestRequestIDsAreKeptWhenSaneAndMadeOtherwise(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.OpenSQLite(t))
	cases := []struct {
		name, sent string
		kept       bool
	}{
		{"a well-formed id from a proxy is kept", "req-42.abc_DEF:1", true},
		{"an id with spaces or quotes is replaced", `evil" id`, false},
		{"an over-long id is replaced", strings.Repeat("a", 200), false},
		{"a missing id is made up", "", false},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var headers []string
			if tc.sent != "" {
				headers = []string{"X-Request-ID", tc.sent}
			}
			got := e.raw(t, "GET", "/healthz", "", "", headers...).Header.Get("X-Request-ID")
			switch {
			case tc.kept && got != tc.sent:
				t.Errorf("X-Request-ID %q, want %q echoed", got, tc.sent)
			case !tc.kept && (got == "" || got == tc.sent || seen[got]):
				t.Errorf("X-Request-ID %q, want a fresh id", got)
			}
			seen[got] = true
		})
	}
}

// logLine is the part of a request log line the tests read.
type logLine struct {
	Msg       string  `json:"msg"`
	RequestID string  `json:"request_id"`
	Method    string  `json:"method"`
	Route     string  `json:"route"`
	Status    int     `json:"status"`
	Duration  float64 `json:"duration_ms"`
	TenantID  string  `json:"tenant_id"`
	Tenant    string  `json:"tenant"`
}

func TestEachRequestLogsOneLineWithRouteAndTenantButNoCredentialsOrBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.OpenSQLite(t))
	key := e.mustCreateTenant(t, "acme")
	resp := e.raw(t, "PUT", "/v1/tenants/acme/secrets/crm_token", key, `{"value": "the-secret-value"}`, "X-Request-ID", "trace-me")
	if resp.StatusCode != 200 {
		t.Fatalf("put secret: %d %s", resp.StatusCode, resp.body)
	}
	logs := e.logs.String()
	for _, secret := range []string{key, "the-secret-value"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log contains %q:\n%s", secret, logs)
		}
	}
	var found *logLine
	sc := bufio.NewScanner(strings.NewReader(logs))
	for sc.Scan() {
		var l logLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("log line is not JSON: %s", sc.Text())
		}
		if l.RequestID == "trace-me" {
			found = &l
		}
	}
	if found == nil {
		t.Fatalf("no log line for request trace-me:\n%s", logs)
	}
	want := logLine{Msg: "http request", RequestID: "trace-me", Method: "PUT", Route: "/v1/tenants/:tenant/secrets/:name", Status: 200, Tenant: "acme"}
	got := *found
	got.Duration, got.TenantID = 0, ""
	if got != want {
		t.Errorf("log line = %+v, want %+v", got, want)
	}
	if !strings.HasPrefix(found.TenantID, "ten_") {
		t.Errorf("log line tenant_id = %q, want the caller's tenant id", found.TenantID)
	}
}

func TestMetricsCountRequestsByRouteTemplateNotByRawPath(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.OpenSQLite(t))
	key := e.mustCreateTenant(t, "acme")
	e.raw(t, "GET", "/v1/tenants/acme/bots/one", key, "")
	e.raw(t, "GET", "/v1/tenants/acme/bots/two", key, "")
	e.raw(t, "GET", "/no/such/path/123", "", "")
	metrics := e.raw(t, "GET", "/metrics", "", "").body
	wants := []string{
		`parley_http_requests_total{method="GET",route="/v1/tenants/:tenant/bots/:bot",status="4xx"} 2`,
		`parley_http_requests_total{method="GET",route="unmatched",status="4xx"} 1`,
		`parley_http_request_duration_seconds_count{method="GET",route="/v1/tenants/:tenant/bots/:bot",status="4xx"} 2`,
	}
	for _, want := range wants {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	for _, raw := range []string{"/bots/one", "/no/such"} {
		if strings.Contains(metrics, raw) {
			t.Errorf("metrics contain the raw path %s, an unbounded label", raw)
		}
	}
}

func TestTheLandingPageSaysWhatTheServerIs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.OpenSQLite(t))
	resp := e.raw(t, "GET", "/", "", "")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET / = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{"Parley", `href="/healthz"`} {
		if !strings.Contains(resp.body, want) {
			t.Errorf("landing page lacks %q", want)
		}
	}
}
