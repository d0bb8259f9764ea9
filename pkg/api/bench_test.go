package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// BenchmarkGetBotWithAnAPIKey measures one authenticated read through the
// whole stack: middleware, key lookup, permission check, tenant-scoped
// query, JSON. It runs on SQLite, the embedded default.
//
//	go test -run '^$' -bench . -benchmem ./pkg/api
func BenchmarkGetBotWithAnAPIKey(b *testing.B) {
	e := newEnv(b, storetest.OpenSQLite(b))
	key := e.mustCreateTenant(b, "acme")
	if _, _, err := e.svc.Bots().Create(context.Background(), platform.Operator(), "acme", "helper", botConfig(b)); err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/v1/tenants/acme/bots/helper", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}
