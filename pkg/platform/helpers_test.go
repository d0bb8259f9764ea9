package platform_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

const platformToken = "test-platform-token-0123456789"

// clock is a settable time source, so expiry is tested without sleeping.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// env is a Service over a real store, with the handles tests need.
type env struct {
	svc   *platform.Service
	store *store.Store
	clock *clock
}

// forEachBackend runs fn with a fresh Service on SQLite, and on PostgreSQL
// when PARLEY_TEST_DATABASE_URL is set.
func forEachBackend(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Helper()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		sealer := mustSealer(t)
		c := &clock{now: time.Now().UTC()}
		svc, err := platform.New(st, platform.Options{
			Sealer:        sealer,
			Passwords:     auth.PasswordHasher{Cost: bcrypt.MinCost},
			PlatformToken: platformToken,
			Clock:         c.Now,
		})
		if err != nil {
			t.Fatal(err)
		}
		fn(t, &env{svc: svc, store: st, clock: c})
	})
}

var ctx = context.Background()

const (
	configV1 = `{"basic_settings":{"name":"Support"}}`
	configV2 = `{"basic_settings":{"name":"Support","tone":"Warm"}}`
	// configBad has two problems, to check that all are reported.
	configBad = `{"basic_settings":{},"bogus":1}`
)

// tenantWithKey creates a tenant and returns it with its first admin key's
// principal.
func (e *env) tenantWithKey(t *testing.T, slug string) (platform.Tenant, *platform.Principal) {
	t.Helper()
	tn, key, err := e.svc.CreateTenant(ctx, platform.Operator(), platform.CreateTenantInput{Slug: slug, Name: slug})
	if err != nil {
		t.Fatalf("create tenant %s: %v", slug, err)
	}
	return tn, e.authenticate(t, key.Key)
}

func (e *env) authenticate(t *testing.T, token string) *platform.Principal {
	t.Helper()
	p, err := e.svc.Authenticate(ctx, token)
	if err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	return p
}

func (e *env) bot(t *testing.T, p *platform.Principal, tenant, slug string) platform.Bot {
	t.Helper()
	b, _, err := e.svc.CreateBot(ctx, p, tenant, slug, []byte(configV1))
	if err != nil {
		t.Fatalf("create bot %s: %v", slug, err)
	}
	return b
}

// wantCode fails unless err is a platform error with the code (nil for "").
func wantCode(t *testing.T, err error, code platform.Code) {
	t.Helper()
	if got := platform.ErrorCode(err); got != code {
		t.Fatalf("error %v has code %q, want %q", err, got, code)
	}
	var pe *platform.Error
	if err != nil && !errors.As(err, &pe) {
		t.Fatalf("error %v is not a *platform.Error", err)
	}
}

// wantInvalid fails unless err is invalid with details at exactly these
// pointers, in order.
func wantInvalid(t *testing.T, err error, pointers ...string) {
	t.Helper()
	wantCode(t, err, platform.CodeInvalid)
	var pe *platform.Error
	errors.As(err, &pe)
	got := make([]string, len(pe.Details))
	for i, d := range pe.Details {
		got[i] = d.Pointer
	}
	if !slices.Equal(got, pointers) {
		t.Fatalf("details %+v, want pointers %q", pe.Details, pointers)
	}
}

func mustSealer(t testing.TB) *auth.Sealer {
	t.Helper()
	s, err := auth.NewSealer(bytes.Repeat([]byte{42}, auth.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
