package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/parleyhq/parley/pkg/api"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/web"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/bcrypt"
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
	logs *syncBuffer
}

func newEnv(t *testing.T, st *store.Store) *env {
	t.Helper()
	key := make([]byte, auth.KeySize)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	sealer, err := auth.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := platform.New(st, platform.Options{
		Sealer: sealer, PlatformToken: testPlatformToken, Passwords: auth.PasswordHasher{Cost: bcrypt.MinCost},
	})
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	reg := prometheus.NewRegistry()
	h, err := api.New(api.Options{
		Platform: svc, Logger: slog.New(slog.NewJSONHandler(logs, nil)), Metrics: reg, Web: web.Files(),
		MaxBodyBytes: 64 << 10,
	})
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
	_, key, err := e.svc.CreateTenant(context.Background(), platform.Operator(), platform.CreateTenantInput{
		Slug: slug, Name: slug + " Inc.", OwnerEmail: "owner@" + slug + ".test", OwnerPassword: "member-password",
	})
	if err != nil {
		t.Fatalf("create tenant %s: %v", slug, err)
	}
	return key.Key
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
