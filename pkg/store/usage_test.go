package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
)

func TestUsage(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn, other := mustTenant(t, st, "acme"), mustTenant(t, st, "other")
		provider := "openai"
		add := func(tenant, day, bot, key string, in, out, cost int64) {
			t.Helper()
			u := &store.Usage{TenantID: tenant, Day: day, BotID: bot, KeyID: key, Provider: provider, InputTokens: in, OutputTokens: out,
				CostMicroUSD: cost, ToolCalls: 1, Turns: 1}
			if err := st.Tenant(u.TenantID).Usage().Add(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
		t.Run("concurrent increments of one row all count", func(t *testing.T) {
			var wg sync.WaitGroup
			for range 10 {
				wg.Go(func() { add(tn.ID, "2030-05-01", "bot_a", "key_1", 10, 5, 7) })
			}
			wg.Wait()
			rows, err := st.Tenant(tn.ID).Usage().Sum(ctx, "", "", store.GroupByDay)
			if err != nil || len(rows) != 1 {
				t.Fatalf("rows %+v, %v", rows, err)
			}
			if r := rows[0]; r.InputTokens != 100 || r.OutputTokens != 50 || r.CostMicroUSD != 70 || r.Turns != 10 || r.ToolCalls != 10 {
				t.Fatalf("sum %+v", r)
			}
		})
		add(tn.ID, "2030-05-02", "bot_b", "key_1", 1, 1, 1)
		provider = "anthropic" // the same bot, key and day, answered by another provider
		add(tn.ID, "2030-05-03", "bot_a", "", 2, 2, 2)
		add(tn.ID, "2030-05-03", "bot_a", "", 3, 3, 3)
		provider = "openai"
		add(tn.ID, "2030-05-03", "bot_a", "", 4, 4, 4)
		add(other.ID, "2030-05-02", "bot_z", "key_9", 1000, 1000, 1000)
		cases := []struct {
			name, from, to, group string
			want                  map[string]int64 // group -> input tokens
		}{
			{"by day over every day", "", "", store.GroupByDay, map[string]int64{"2030-05-01": 100, "2030-05-02": 1, "2030-05-03": 9}},
			{"by bot", "", "", store.GroupByBot, map[string]int64{"bot_a": 109, "bot_b": 1}},
			{"by key, calls without a key under the empty key", "", "", store.GroupByKey, map[string]int64{"key_1": 101, "": 9}},
			{"by provider", "", "", store.GroupByProvider, map[string]int64{"openai": 105, "anthropic": 5}},
			{"by day within from and to, both inclusive", "2030-05-02", "2030-05-03", store.GroupByDay, map[string]int64{"2030-05-02": 1, "2030-05-03": 9}},
		}
		for _, tc := range cases {
			t.Run("usage sums "+tc.name, func(t *testing.T) {
				rows, err := st.Tenant(tn.ID).Usage().Sum(ctx, tc.from, tc.to, tc.group)
				if err != nil {
					t.Fatal(err)
				}
				got := map[string]int64{}
				for _, r := range rows {
					got[r.Group] = r.InputTokens
				}
				if len(got) != len(tc.want) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
				for k, v := range tc.want {
					if got[k] != v {
						t.Fatalf("got %v, want %v", got, tc.want)
					}
				}
			})
		}
		t.Run("a day's tokens count every bot and key of the tenant only", func(t *testing.T) {
			n, err := st.Tenant(tn.ID).Usage().DayTokens(ctx, "2030-05-03")
			if err != nil || n != 18 {
				t.Fatalf("tokens %d, %v", n, err)
			}
		})
		t.Run("embedding tokens are summed apart and count in the day's tokens", func(t *testing.T) {
			u := &store.Usage{Day: "2030-05-03", Hour: "2030-05-03T10", BotID: "bot_a", EmbeddingTokens: 7}
			if err := st.Tenant(tn.ID).Usage().Add(ctx, u); err != nil {
				t.Fatal(err)
			}
			if n, err := st.Tenant(tn.ID).Usage().DayTokens(ctx, "2030-05-03"); err != nil || n != 25 {
				t.Fatalf("tokens %d, %v; want 18 of the models and 7 embedded", n, err)
			}
			rows, err := st.Tenant(tn.ID).Usage().Sum(ctx, "2030-05-03", "2030-05-03", store.GroupByDay)
			if err != nil || len(rows) != 1 || rows[0].EmbeddingTokens != 7 || rows[0].InputTokens != 9 {
				t.Fatalf("rows %+v, %v", rows, err)
			}
		})
		t.Run("grouping by something else is refused", func(t *testing.T) {
			if _, err := st.Tenant(tn.ID).Usage().Sum(ctx, "", "", "tenant"); err == nil {
				t.Fatal("no error")
			}
		})
	})
}

func TestIdempotencyKeys(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn, other := mustTenant(t, st, "acme"), mustTenant(t, st, "other")
		stale := 10 * time.Minute
		// claim returns the key's record when the caller did not win it.
		claim := func(tenant, key, fp string, at time.Time) *store.IdempotencyKey {
			t.Helper()
			rec, won, err := st.Tenant(tenant).Idempotency().Claim(ctx, key, fp, at, stale)
			if err != nil {
				t.Fatal(err)
			}
			if won {
				if rec == nil || rec.MessageID == "" {
					t.Fatalf("a won claim names no message id: %+v", rec)
				}
				return nil
			}
			return rec
		}
		t.Run("the first request with a key wins the claim", func(t *testing.T) {
			if rec := claim(tn.ID, "k1", "fp", now()); rec != nil {
				t.Fatalf("existing record %+v", rec)
			}
		})
		t.Run("a duplicate while the first runs sees it in progress", func(t *testing.T) {
			rec := claim(tn.ID, "k1", "fp", now().Add(time.Second))
			if rec == nil || rec.Done() {
				t.Fatalf("record %+v", rec)
			}
		})
		t.Run("the same key in another tenant is independent", func(t *testing.T) {
			if rec := claim(other.ID, "k1", "fp", now()); rec != nil {
				t.Fatalf("existing record %+v", rec)
			}
		})
		t.Run("a retry after completion gets the stored response", func(t *testing.T) {
			if err := st.Tenant(tn.ID).Idempotency().Complete(ctx, "k1", 200, "application/json", `{"ok":true}`); err != nil {
				t.Fatal(err)
			}
			rec := claim(tn.ID, "k1", "fp", now().Add(time.Hour))
			if rec == nil || rec.Status != 200 || rec.Body != `{"ok":true}` || rec.Fingerprint != "fp" {
				t.Fatalf("record %+v", rec)
			}
		})
		t.Run("a claim whose server hangs is handed over once stale, with its message id", func(t *testing.T) {
			first, _, err := st.Tenant(tn.ID).Idempotency().Claim(ctx, "k2", "fp", now(), stale)
			if err != nil {
				t.Fatal(err)
			}
			rec, won, err := st.Tenant(tn.ID).Idempotency().Claim(ctx, "k2", "fp2", now().Add(stale+time.Second), stale)
			if err != nil || !won || rec.MessageID != first.MessageID {
				t.Fatalf("stale claim not handed over with message %s: %+v, %v, %v", first.MessageID, rec, won, err)
			}
		})
		t.Run("a released claim goes at once to the same request, with its message id, and to no other", func(t *testing.T) {
			first, _, err := st.Tenant(tn.ID).Idempotency().Claim(ctx, "k4", "fp", now(), stale)
			if err != nil {
				t.Fatal(err)
			}
			if rec := claim(tn.ID, "k4", "fp", now()); rec == nil || rec.Done() {
				t.Fatalf("before the release a duplicate got %+v, want it in progress", rec)
			}
			if err := st.Tenant(tn.ID).Idempotency().Release(ctx, "k4"); err != nil {
				t.Fatal(err)
			}
			if rec := claim(tn.ID, "k4", "another request", now()); rec == nil || rec.Fingerprint != "fp" {
				t.Fatalf("another request took the released claim: %+v", rec)
			}
			rec, won, err := st.Tenant(tn.ID).Idempotency().Claim(ctx, "k4", "fp", now(), stale)
			if err != nil || !won || rec.MessageID != first.MessageID {
				t.Fatalf("the retry was not handed the claim with message %s: %+v, %v, %v", first.MessageID, rec, won, err)
			}
			if rec := claim(tn.ID, "k4", "fp", now()); rec == nil || rec.Done() {
				t.Fatalf("once handed over, a duplicate got %+v, want it in progress", rec)
			}
		})
		t.Run("a forgotten claim may be made again", func(t *testing.T) {
			claim(tn.ID, "k3", "fp", now())
			if err := st.Tenant(tn.ID).Idempotency().Forget(ctx, "k3"); err != nil {
				t.Fatal(err)
			}
			if rec := claim(tn.ID, "k3", "fp", now()); rec != nil {
				t.Fatalf("record %+v", rec)
			}
		})
	})
}
