package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/bcrypt"

	"github.com/parleyhq/parley/pkg/api"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/dialog/dialogtest"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/llm/openai"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/redact/redacttest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// BenchmarkAnalyticsRoute times GET /analytics through the real HTTP
// server for a tenant whose rollups hold a million messages (90 days,
// every hour, two versions, three channels), beside another tenant as
// large, on SQLite and PostgreSQL, over 30 and 90 days, and reports the
// median request (p50-ms) besides the mean.
//
//	go test ./pkg/api -run '^$' -bench BenchmarkAnalyticsRoute -benchtime 30x
func BenchmarkAnalyticsRoute(b *testing.B) {
	end := time.Date(2030, 3, 31, 0, 0, 0, 0, time.UTC)
	for _, be := range storetest.Open(b) {
		srv, key := analyticsServer(b, be.Store, end)
		for _, days := range []int{30, 90} {
			path := fmt.Sprintf("/v1/tenants/big/analytics?bot=helper&from=%s&to=%s", end.AddDate(0, 0, -days).Format(time.DateOnly),
				end.AddDate(0, 0, -1).Format(time.DateOnly))
			a, err := apiclient.New(srv.URL, key).WithHTTPClient(srv.Client()).Analytics(context.Background(), "big",
				apiclient.AnalyticsQuery{Bot: "helper", From: end.AddDate(0, 0, -days).Format(time.DateOnly), To: end.AddDate(0, 0, -1).Format(time.DateOnly)})
			if want := int64(days * 24 * 2 * 3 * 13); err != nil || a.Dialogs != want {
				b.Fatalf("analytics: %v, %v; want %d dialogs", a, err, want)
			}
			b.Run(fmt.Sprintf("%s/%ddays", be.Name, days), func(b *testing.B) {
				var took []time.Duration
				for b.Loop() {
					start := time.Now()
					req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
					req.Header.Set("Authorization", "Bearer "+key)
					res, err := srv.Client().Do(req)
					if err != nil {
						b.Fatal(err)
					}
					body, _ := io.ReadAll(res.Body)
					res.Body.Close()
					if res.StatusCode != http.StatusOK {
						b.Fatalf("%d %s", res.StatusCode, body)
					}
					took = append(took, time.Since(start))
				}
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			})
		}
	}
}

// analyticsServer is a server whose tenants "big" and "other" each have
// a bot "helper" with a million messages' worth of rollups before end,
// and the key of "big".
func analyticsServer(b *testing.B, st *store.Store, end time.Time) (*httptest.Server, string) {
	b.Helper()
	llmSrv := llmtest.NewServer(b, llmtest.Options{APIKey: "sk-test"})
	provider, err := openai.New(openai.Config{BaseURL: llmSrv.URL(), APIKey: "sk-test", MaxRetries: -1})
	if err != nil {
		b.Fatal(err)
	}
	sealer, _ := auth.NewSealer(make([]byte, auth.KeySize))
	svc := platformtest.New(b, st, platform.Options{Sealer: sealer, PlatformToken: testPlatformToken,
		Passwords: auth.PasswordHasher{Cost: bcrypt.MinCost}})
	reg := prometheus.NewRegistry()
	rt := dialogtest.New(b, dialog.Options{Service: svc, Store: st, Provider: provider, DefaultModel: "gpt-4o-mini", Metrics: reg})
	h, err := api.New(api.Options{Platform: svc, Runtime: rt, Metrics: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	e := &env{svc: svc, srv: srv, h: h, reg: reg, logs: &redacttest.Logs{}}
	ctx, op := context.Background(), platform.Operator()
	var key string
	for _, slug := range []string{"big", "other"} {
		k := e.mustCreateTenant(b, slug)
		if key == "" {
			key = k
		}
		if _, _, err := svc.Bots().Create(ctx, op, slug, "helper", []byte(`{"basic_settings": {"name": "Helper"}}`)); err != nil {
			b.Fatal(err)
		}
		tn, err := st.Tenants().Get(ctx, slug)
		if err != nil {
			b.Fatal(err)
		}
		bot, err := st.Tenant(tn.ID).Bots().Get(ctx, "helper")
		if err != nil {
			b.Fatal(err)
		}
		if messages := seedMillion(b, st, tn.ID, bot.ID, end); messages < 1_000_000 {
			b.Fatalf("seeded %d messages", messages)
		}
	}
	return srv, key
}

// seedMillion writes 90 days of hourly rollups for two versions and
// three channels of one bot, and returns the messages they stand for (a
// user message and a reply per reply counted).
func seedMillion(b *testing.B, st *store.Store, tenantID, botID string, end time.Time) int64 {
	b.Helper()
	var rows []store.Rollup
	var messages int64
	for at := end.AddDate(0, 0, -90); at.Before(end); at = at.Add(time.Hour) {
		for v := 1; v <= 2; v++ {
			for _, ch := range []string{"widget", "api", "telegram"} {
				r := store.Rollup{TenantID: tenantID, Hour: at.Format(store.HourFormat), BotID: botID, VersionNumber: v, Channel: ch,
					Dialogs: 13, Resolved: 9, HandedOff: 2, Abandoned: 1, Failed: 1, Ratings: 4, RatingSum: 17, Satisfied: 3,
					Replies: 39, FirstResponseMS: 39 * 800, FirstResponses: 39, ReplyMS: 39 * 2500, ToolCalls: 20, ToolFailures: 1,
					KnowledgeSearch: 10, KnowledgeHits: 7, CostMicroUSD: 52_000}
				messages += 2 * r.Replies
				rows = append(rows, r)
			}
		}
	}
	if err := st.DB().CreateInBatches(rows, 500).Error; err != nil {
		b.Fatal(err)
	}
	return messages
}
