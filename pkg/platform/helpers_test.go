package platform_test

import (
	"context"
	"testing"

	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

const platformToken = platformtest.PlatformToken

// env is a Service over a real store, with the handles tests need.
type env struct {
	svc   *platform.Service
	store *store.Store
	clock *platformtest.Clock
}

// forEachBackend runs fn with a fresh Service on SQLite, and on PostgreSQL
// when PARLEY_TEST_DATABASE_URL is set.
func forEachBackend(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Helper()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		svc, c := platformtest.NewService(t, st)
		fn(t, &env{svc: svc, store: st, clock: c})
	})
}

var ctx = context.Background()

const (
	configV1 = platformtest.ConfigV1
	configV2 = `{"basic_settings":{"name":"Support","tone":"Warm"}}`
	// configBad has two problems, to check that all are reported.
	configBad = `{"basic_settings":{},"bogus":1}`
)

func (e *env) tenantWithKey(t *testing.T, slug string) (platform.Tenant, *platform.Principal) {
	t.Helper()
	return platformtest.TenantWithKey(t, e.svc, slug)
}

func (e *env) authenticate(t *testing.T, token string) *platform.Principal {
	t.Helper()
	return platformtest.Authenticate(t, e.svc, token)
}

func (e *env) bot(t *testing.T, p *platform.Principal, tenant, slug string) platform.Bot {
	t.Helper()
	return platformtest.Bot(t, e.svc, p, tenant, slug)
}

var (
	wantCode    = platformtest.WantCode
	wantInvalid = platformtest.WantInvalid
	mustSealer  = platformtest.Sealer
)
