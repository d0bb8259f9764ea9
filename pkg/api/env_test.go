package api_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/bcrypt"

	"github.com/parleyhq/parley/pkg/api"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/dialog/dialogtest"
	"github.com/parleyhq/parley/pkg/inbound"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/redact/redacttest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/web"
)

// testPlatformToken is the operator's token in every test server.
const testPlatformToken = "test-platform-token-0123456789abcdef"

// env is a real API server over a real store, with the platform service
// beside it for arranging fixtures directly.
type env struct {
	svc  *platform.Service
	srv  *httptest.Server
	h    *api.Handler
	reg  *prometheus.Registry
	logs *redacttest.Logs
}

// generousLogins lets the tests, which sign in afresh for many requests
// from one address, sign in as often as they like.
var generousLogins = api.LoginLimit{EmailBurst: 1 << 20, EmailEvery: time.Millisecond, IPBurst: 1 << 20, IPEvery: time.Millisecond}

func newEnv(t testing.TB, st *store.Store) *env {
	t.Helper()
	return newEnvWith(t, st, func(o *api.Options) { o.LoginLimit = &generousLogins })
}

// newEnvWith is newEnv with the API's options changed by each of with.
func newEnvWith(t testing.TB, st *store.Store, with ...func(*api.Options)) *env {
	t.Helper()
	return newEnvWithPlatform(t, st, nil, with...)
}

// newEnvWithPlatform is newEnvWith with the platform's options changed
// by platformWith too (when not nil).
func newEnvWithPlatform(t testing.TB, st *store.Store, platformWith func(*platform.Options), with ...func(*api.Options)) *env {
	t.Helper()
	key := make([]byte, auth.KeySize)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	sealer, err := auth.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	popts := platform.Options{
		Sealer: sealer, PlatformToken: testPlatformToken, Passwords: auth.PasswordHasher{Cost: bcrypt.MinCost},
	}
	if platformWith != nil {
		platformWith(&popts)
	}
	svc := platformtest.New(t, st, popts)
	logs := &redacttest.Logs{}
	reg := prometheus.NewRegistry()
	// A model that always answers, so a turn a caller may run succeeds:
	// a run that fails answers an error status.
	model := llmtest.NewScripted(llmtest.Text("ok"))
	model.Cycle = true
	rt := dialogtest.New(t, dialog.Options{Service: svc, Store: st, Provider: model, DefaultModel: "gpt-4o-mini", Metrics: reg})
	log := slog.New(slog.NewJSONHandler(logs, nil))
	channels, err := inbound.New(inbound.Options{Platform: svc, Runtime: rt, Store: st,
		Client: outbound.NewClient(outbound.Policy{}, outbound.Options{}), Logger: log, Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	opts := api.Options{
		Platform: svc, Runtime: rt, Inbound: channels, Logger: log, Metrics: reg, Web: web.Files(),
		MaxBodyBytes: 64 << 10,
	}
	for _, w := range with {
		w(&opts)
	}
	h, err := api.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &env{svc: svc, srv: srv, h: h, reg: reg, logs: logs}
}

// client returns an API client with token as its credential.
func (e *env) client(token string) *apiclient.Client {
	return apiclient.New(e.srv.URL, token).WithHTTPClient(e.srv.Client())
}

// botConfig is a valid config that uses a secret, an HTTP tool and a native
// tool.
func botConfig(t testing.TB) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile("testdata/bot.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mustCreateTenant creates a tenant with an owner and returns its first
// admin key.
func (e *env) mustCreateTenant(t testing.TB, slug string) string {
	t.Helper()
	_, key, err := e.svc.Tenants().Create(context.Background(), platform.Operator(), platform.CreateTenantInput{
		Slug: slug, Name: slug + " Inc.", OwnerEmail: "owner@" + slug + ".test", OwnerPassword: "member-password",
	})
	if err != nil {
		t.Fatalf("create tenant %s: %v", slug, err)
	}
	return key.Key
}

// rawResponse is a response with its body read.
type rawResponse struct {
	*http.Response
	body string
}

// raw sends one request as a browser or curl would, without the client's
// conveniences (no CSRF header), so tests see exactly what went over the
// wire. headers are name, value pairs.
func (e *env) raw(t *testing.T, method, path, token, body string, headers ...string) rawResponse {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rawResponse{Response: resp, body: string(b)}
}
