// Package platformtest gives tests a platform Service over a real store,
// fixtures made through it, and checks of the errors it returns.
package platformtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"

	"github.com/parleyhq/parley/configs"
	"github.com/xeipuuv/gojsonschema"
)

// PlatformToken is the operator token of NewService's Service.
const PlatformToken = "test-platform-token-0123456789"

// ConfigV1 is a minimal valid bot config.
const ConfigV1 = `{"basic_settings":{"name":"Support"}}`

// Clock is a settable time source, so expiry is tested without sleeping.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock at now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// NewService returns a Service over st with PlatformToken, cheap password
// hashing and a Clock at the current time.
func NewService(t testing.TB, st *store.Store) (*platform.Service, *Clock) {
	t.Helper()
	c := NewClock(time.Now().UTC())
	return New(t, st, platform.Options{
		Passwords:     auth.PasswordHasher{Cost: bcrypt.MinCost},
		PlatformToken: PlatformToken,
		Clock:         c.Now,
	}), c
}

// New returns platform.New(st, Fill(t, opts)), failing t on error.
func New(t testing.TB, st *store.Store, opts platform.Options) *platform.Service {
	t.Helper()
	svc, err := platform.New(st, Fill(t, opts))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// Fill returns opts with its nil Sealer, Authorizer, Clock and Logger set
// to a fresh Sealer, the embedded policy, time.Now and a logger that
// discards: what cmd/parley gives them, for tests that do not care.
func Fill(t testing.TB, opts platform.Options) platform.Options {
	t.Helper()
	if opts.Sealer == nil {
		opts.Sealer = Sealer(t)
	}
	if opts.Authorizer == nil {
		a, err := auth.NewAuthorizer()
		if err != nil {
			t.Fatal(err)
		}
		opts.Authorizer = a
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return opts
}

// TenantWithKey creates a tenant and returns it with its first admin key's
// principal.
func TenantWithKey(t testing.TB, svc *platform.Service, slug string) (platform.Tenant, *platform.Principal) {
	t.Helper()
	tn, key, err := svc.Tenants().Create(context.Background(), platform.Operator(), platform.CreateTenantInput{Slug: slug, Name: slug})
	if err != nil {
		t.Fatalf("create tenant %s: %v", slug, err)
	}
	return tn, Authenticate(t, svc, key.Key)
}

// Authenticate returns the principal of token.
func Authenticate(t testing.TB, svc *platform.Service, token string) *platform.Principal {
	t.Helper()
	p, err := svc.Auth().Authenticate(context.Background(), token)
	if err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	return p
}

// Bot creates a bot with ConfigV1 as p.
func Bot(t testing.TB, svc *platform.Service, p *platform.Principal, tenant, slug string) platform.Bot {
	t.Helper()
	b, _, err := svc.Bots().Create(context.Background(), p, tenant, slug, []byte(ConfigV1))
	if err != nil {
		t.Fatalf("create bot %s: %v", slug, err)
	}
	return b
}

// WantCode fails unless err is a platform error with the code (nil for "").
func WantCode(t testing.TB, err error, code platform.Code) {
	t.Helper()
	if got := platform.ErrorCode(err); got != code {
		t.Fatalf("error %v has code %q, want %q", err, got, code)
	}
	var pe *platform.Error
	if err != nil && !errors.As(err, &pe) {
		t.Fatalf("error %v is not a *platform.Error", err)
	}
}

// WantInvalid fails unless err is invalid with details at exactly these
// pointers, in order.
func WantInvalid(t testing.TB, err error, pointers ...string) {
	t.Helper()
	WantCode(t, err, platform.CodeInvalid)
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

// Sealer returns a secrets sealer with a fixed key.
func Sealer(t testing.TB) *auth.Sealer {
	t.Helper()
	s, err := auth.NewSealer(bytes.Repeat([]byte{42}, auth.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// WantWebhookSchema fails unless body is valid under the JSON Schema of
// its event type (configs/webhooks/<type>.schema.json).
func WantWebhookSchema(t testing.TB, typ, body string) {
	t.Helper()
	schema, err := configs.WebhookSchema(typ)
	if err != nil {
		t.Fatalf("no schema for %s: %v", typ, err)
	}
	res, err := gojsonschema.Validate(gojsonschema.NewBytesLoader(schema), gojsonschema.NewStringLoader(body))
	if err != nil {
		t.Fatalf("validate %s: %v", typ, err)
	}
	for _, e := range res.Errors() {
		t.Errorf("%s body %s: %s", typ, body, e)
	}
}

// OutboxData returns the data of the outbox's events of type typ, oldest
// first, each body checked against its JSON Schema (WantWebhookSchema).
func OutboxData(t testing.TB, st *store.Store, typ string) []map[string]any {
	t.Helper()
	var rows []store.WebhookEvent
	if err := st.DB().Where("type = ?", typ).Order("id").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		WantWebhookSchema(t, typ, r.Body)
		var env struct {
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal([]byte(r.Body), &env); err != nil {
			t.Fatal(err)
		}
		out[i] = env.Data
	}
	return out
}
