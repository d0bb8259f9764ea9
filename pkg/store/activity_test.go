package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
)

func TestActivity(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn, other := mustTenant(t, st, "acme"), mustTenant(t, st, "globex")
		ts := st.Tenant(tn.ID)
		support, sales := mustBot(t, st, tn.ID, "support"), mustBot(t, st, tn.ID, "sales")
		day1 := time.Date(2030, 1, 30, 23, 30, 0, 0, time.UTC)
		day2 := day1.Add(time.Hour) // 2030-01-31
		started := func(b *store.Bot, user string, at time.Time, preview bool) *store.Dialog {
			d := &store.Dialog{TenantID: b.TenantID, BotID: b.ID, VersionNumber: 1, UserID: user, Preview: preview, CreatedAt: at, UpdatedAt: at}
			if err := st.Tenant(d.TenantID).Dialogs().Create(ctx, d); err != nil {
				t.Fatal(err)
			}
			return d
		}
		started(support, "ann", day1, false)
		started(support, "ann", day2, false)
		started(support, "bob", day2, false)
		started(support, "", day2, false)
		started(support, "editor", day2, true)
		started(sales, "cat", day2, false)
		started(mustBot(t, st, other.ID, "x"), "zed", day2, false)
		rated := started(support, "dan", day2, false)
		reply := say(t, st, rated, "assistant", "hi")
		if err := ts.Feedback().Put(ctx, &store.Feedback{TenantID: tn.ID, DialogID: rated.ID, MessageID: reply.ID, Rating: store.FeedbackUp}); err != nil {
			t.Fatal(err)
		}
		today := time.Now().UTC().Format(store.DayFormat)
		for _, u := range []store.Usage{
			{TenantID: tn.ID, Day: "2030-01-31", Hour: "2030-01-31T00", BotID: support.ID, Provider: "openai", InputTokens: 100, OutputTokens: 20, CostMicroUSD: 1500, ToolCalls: 3},
			{TenantID: tn.ID, Day: "2030-01-31", Hour: "2030-01-31T00", BotID: support.ID, Messages: 4, ToolErrors: 1},
			{TenantID: tn.ID, Day: "2030-01-31", Hour: "2030-01-31T00", BotID: sales.ID, Messages: 2},
			{TenantID: other.ID, Day: "2030-01-31", Hour: "2030-01-31T00", BotID: sales.ID, Messages: 50},
		} {
			if err := st.Tenant(u.TenantID).Usage().Add(ctx, &u); err != nil {
				t.Fatal(err)
			}
		}

		days := func(from, to string) (time.Time, time.Time) {
			start, _ := time.Parse(store.DayFormat, from)
			end, _ := time.Parse(store.DayFormat, to)
			return start, end.AddDate(0, 0, 1)
		}
		t.Run("every day of the range is there, counted from dialogs, usage and feedback", func(t *testing.T) {
			start, end := days("2030-01-29", "2030-01-31")
			got, err := ts.Activity().Buckets(ctx, "", store.BucketDay, start, end)
			if err != nil || len(got) != 3 {
				t.Fatalf("activity %+v, %v", got, err)
			}
			if got[0] != (store.ActivityBucket{Start: "2030-01-29"}) {
				t.Errorf("an empty day %+v", got[0])
			}
			if got[1].Dialogs != 1 || got[1].EndUsers != 1 {
				t.Errorf("day 1 %+v", got[1])
			}
			want := store.ActivityBucket{Start: "2030-01-31", Dialogs: 5, EndUsers: 4, Messages: 6, InputTokens: 100, OutputTokens: 20,
				CostMicroUSD: 1500, ToolCalls: 3, ToolErrors: 1}
			if today == want.Start {
				want.FeedbackUp = 1
			}
			if got[2] != want {
				t.Errorf("day 2 %+v, want %+v", got[2], want)
			}
		})
		t.Run("one bot's activity leaves the others out", func(t *testing.T) {
			start, end := days("2030-01-31", "2030-01-31")
			got, err := ts.Activity().Buckets(ctx, sales.ID, store.BucketDay, start, end)
			if err != nil || len(got) != 1 || got[0] != (store.ActivityBucket{Start: "2030-01-31", Dialogs: 1, EndUsers: 1, Messages: 2}) {
				t.Fatalf("sales activity %+v, %v", got, err)
			}
		})
		t.Run("feedback counts on the day it was given", func(t *testing.T) {
			start, end := days(today, today)
			got, err := ts.Activity().Buckets(ctx, support.ID, store.BucketDay, start, end)
			if err != nil || len(got) != 1 || got[0].FeedbackUp != 1 || got[0].FeedbackDown != 0 {
				t.Fatalf("today %+v, %v", got, err)
			}
			hour := time.Now().UTC().Truncate(time.Hour)
			got, err = ts.Activity().Buckets(ctx, support.ID, store.BucketHour, hour, hour.Add(time.Hour))
			if err != nil || len(got) != 1 || got[0].Start != hour.Format(store.HourFormat) || got[0].FeedbackUp != 1 {
				t.Fatalf("this hour %+v, %v", got, err)
			}
		})
		t.Run("hour by hour, each UTC hour counts its own dialogs and usage", func(t *testing.T) {
			start := time.Date(2030, 1, 30, 22, 0, 0, 0, time.UTC)
			got, err := ts.Activity().Buckets(ctx, "", store.BucketHour, start, start.Add(4*time.Hour))
			if err != nil || len(got) != 4 {
				t.Fatalf("activity %+v, %v", got, err)
			}
			want := []store.ActivityBucket{{Start: "2030-01-30T22"}, {Start: "2030-01-30T23", Dialogs: 1, EndUsers: 1},
				{Start: "2030-01-31T00", Dialogs: 5, EndUsers: 4, Messages: 6, InputTokens: 100, OutputTokens: 20, CostMicroUSD: 1500, ToolCalls: 3, ToolErrors: 1},
				{Start: "2030-01-31T01"}}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("hour %d: %+v, want %+v", i, got[i], want[i])
				}
			}
		})
		t.Run("usage without an hour counts by day only", func(t *testing.T) {
			if err := ts.Usage().Add(ctx, &store.Usage{TenantID: tn.ID, Day: "2030-01-29", BotID: sales.ID, Messages: 7}); err != nil {
				t.Fatal(err)
			}
			start := time.Date(2030, 1, 29, 0, 0, 0, 0, time.UTC)
			byHour, err := ts.Activity().Buckets(ctx, sales.ID, store.BucketHour, start, start.Add(24*time.Hour))
			if err != nil || len(byHour) != 24 || slices.ContainsFunc(byHour, func(b store.ActivityBucket) bool { return b.Messages != 0 }) {
				t.Fatalf("by hour %+v, %v", byHour, err)
			}
			byDay, err := ts.Activity().Buckets(ctx, sales.ID, store.BucketDay, start, start.Add(24*time.Hour))
			if err != nil || len(byDay) != 1 || byDay[0].Messages != 7 {
				t.Fatalf("by day %+v, %v", byDay, err)
			}
		})
	})
}
