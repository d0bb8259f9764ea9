package dialog_test

import (
	"context"
	"testing"

	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/dialog/dialogtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

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

// runtime is a runtime over e's service, store and clock.
func (e *env) runtime(t testing.TB, opts dialog.Options) *dialog.Runtime {
	t.Helper()
	opts.Service, opts.Store, opts.Clock = e.svc, e.store, e.clock.Now
	return dialogtest.New(t, opts)
}

var ctx = context.Background()

const configV1 = platformtest.ConfigV1

func (e *env) tenantWithKey(t *testing.T, slug string) (platform.Tenant, *platform.Principal) {
	t.Helper()
	return platformtest.TenantWithKey(t, e.svc, slug)
}

var (
	wantCode    = platformtest.WantCode
	wantInvalid = platformtest.WantInvalid
	mustSealer  = platformtest.Sealer
)
