package apply

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parleyhq/parley/pkg/api"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/dialog/dialogtest"
	"github.com/parleyhq/parley/pkg/inbound"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
	"github.com/parleyhq/parley/web"
)

// platformToken is the operator's token of every test server.
const platformToken = "apply-test-platform-token-0123456789"

// targets are the two ways apply writes, each on a database of its own:
// straight to one (db, as parley apply without --server) and through a
// real API server over another (api, as with --server and the platform
// token). Both take webhook and source URLs on 127.0.0.1, port 9.
type targets struct {
	dbSvc *platform.Service
	db    dbTarget
	api   apiTarget
	// env holds the environment variables the directories name.
	env map[string]string
}

// eachBackend runs fn on SQLite and, with PARLEY_TEST_DATABASE_URL set, on
// PostgreSQL, with fresh databases for both targets.
func eachBackend(t *testing.T, fn func(t *testing.T, tg *targets)) {
	t.Helper()
	open := map[string]func(t testing.TB) *store.Store{store.DialectSQLite: storetest.OpenSQLite}
	if u := os.Getenv(storetest.EnvDatabaseURL); u != "" {
		open[store.DialectPostgres] = func(t testing.TB) *store.Store { return storetest.OpenPostgres(t, u) }
	}
	for name, o := range open {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, newTargets(t, o(t), o(t)))
		})
	}
}

func newTargets(t *testing.T, dbStore, srvStore *store.Store) *targets {
	t.Helper()
	policy, err := outbound.ParsePolicy([]string{"127.0.0.1/32"}, []int{9})
	if err != nil {
		t.Fatal(err)
	}
	service := func(st *store.Store) *platform.Service {
		return platformtest.New(t, st, platform.Options{PlatformToken: platformToken, OutboundPolicy: &policy})
	}
	dbSvc, srvSvc := service(dbStore), service(srvStore)
	log, reg := slog.New(slog.DiscardHandler), prometheus.NewRegistry()
	rt := dialogtest.New(t, dialog.Options{Service: srvSvc, Store: srvStore, Provider: llmtest.NewScripted(), DefaultModel: "gpt-4o-mini", Metrics: reg})
	channels, err := inbound.New(inbound.Options{Platform: srvSvc, Runtime: rt, Store: srvStore,
		Client: outbound.NewClient(outbound.Policy{}, outbound.Options{}), Logger: log, Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	h, err := api.New(api.Options{Platform: srvSvc, Runtime: rt, Inbound: channels, Logger: log, Metrics: reg, Web: web.Files(), MaxBodyBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &targets{dbSvc: dbSvc, db: dbTarget{svc: dbSvc, op: platform.Operator()},
		api: apiTarget{c: apiclient.New(srv.URL, platformToken).WithHTTPClient(srv.Client())}, env: map[string]string{}}
}

func (tg *targets) getenv(k string) string { return tg.env[k] }

// apply reads dir and applies it to target, as parley apply does; it
// fails t when a file has a problem or a change fails, and returns what
// apply printed.
func (tg *targets) apply(t *testing.T, target Target, dir string, opts Options) string {
	t.Helper()
	out, errs, stats := tg.run(t, target, dir, opts)
	if stats.Failed > 0 {
		t.Fatalf("%d change(s) failed:\n%s%s", stats.Failed, out, errs)
	}
	return out
}

// run is apply without failing t for a change that failed.
func (tg *targets) run(t *testing.T, target Target, dir string, opts Options) (out, errs string, stats Stats) {
	t.Helper()
	tenants, problems := ReadDir(dir, tg.getenv, botconfig.Options{})
	if len(problems) > 0 {
		t.Fatalf("the directory has problems: %v", problems)
	}
	var stdout, stderr bytes.Buffer
	opts.Out, opts.Err = &stdout, &stderr
	stats, err := Run(context.Background(), target, tenants, opts)
	if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), stats
}

// applyBoth applies dir to both targets and returns both outputs.
func (tg *targets) applyBoth(t *testing.T, dir string, opts Options) []string {
	t.Helper()
	return []string{tg.apply(t, tg.db, dir, opts), tg.apply(t, tg.api, dir, opts)}
}
