package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// BenchmarkAnalyticsRollups reads a period's analytics of a tenant whose
// rollups hold a million messages (90 days, every hour, two versions,
// three channels: about 77 messages an hour per version and channel),
// beside another tenant as large, on SQLite and PostgreSQL. One op is
// the grouped read GET /analytics makes (store.Insights.Sum).
//
//	go test ./pkg/store -run '^$' -bench BenchmarkAnalyticsRollups -benchtime 20x
func BenchmarkAnalyticsRollups(b *testing.B) {
	end := time.Date(2030, 3, 31, 0, 0, 0, 0, time.UTC)
	for _, be := range storetest.Open(b) {
		ctx := context.Background()
		var tenants []string
		for _, slug := range []string{"big", "other"} {
			tn := &store.Tenant{Slug: slug, Name: slug}
			if err := be.Store.Tenants().Create(ctx, tn); err != nil {
				b.Fatal(err)
			}
			tenants = append(tenants, tn.ID)
			if messages := seedRollups(b, be.Store, tn.ID, end); messages < 1_000_000 {
				b.Fatalf("seeded %d messages", messages)
			}
		}
		for _, days := range []int{30, 90} {
			q := store.RollupQuery{From: end.AddDate(0, 0, -days).Format(store.HourFormat), To: end.Format(store.HourFormat), BotID: "bot_b"}
			b.Run(fmt.Sprintf("%s/%ddays", be.Name, days), func(b *testing.B) {
				for b.Loop() {
					rows, err := be.Store.Tenant(tenants[0]).Insights().Sum(ctx, q)
					if err != nil || len(rows) != days*24*2 {
						b.Fatalf("%d rows, %v", len(rows), err)
					}
				}
			})
		}
	}
}

// seedRollups writes 90 days of hourly rollups for two versions and
// three channels of one bot, and returns the messages they stand for
// (a user message and a reply per reply counted).
func seedRollups(b *testing.B, st *store.Store, tenantID string, end time.Time) int64 {
	b.Helper()
	var rows []store.Rollup
	var messages int64
	for at := end.AddDate(0, 0, -90); at.Before(end); at = at.Add(time.Hour) {
		for v := 1; v <= 2; v++ {
			for _, ch := range []string{"widget", "api", "telegram"} {
				r := store.Rollup{TenantID: tenantID, Hour: at.Format(store.HourFormat), BotID: "bot_b", VersionNumber: v, Channel: ch,
					Dialogs: 13, Resolved: 9, HandedOff: 2, Abandoned: 1, Failed: 1, Ratings: 4, RatingSum: 17, Satisfied: 3,
					Replies: 39, FirstResponseMS: 39 * 800, FirstResponses: 39, ReplyMS: 39 * 2500, ToolCalls: 20, ToolFailures: 1,
					CostMicroUSD: 52_000}
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
