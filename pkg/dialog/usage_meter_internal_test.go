package dialog

import (
	"context"
	"log/slog"
	"testing"

	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

func TestMeter(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := &store.Tenant{Slug: "acme", Name: "Acme"}
		if err := st.Tenants().Create(ctx, tn); err != nil {
			t.Fatal(err)
		}
		m := newMeter(st, slog.New(slog.DiscardHandler))
		turn := store.Usage{TenantID: tn.ID, Day: "2030-05-01", BotID: "bot_1", KeyID: "key_1",
			InputTokens: 100, OutputTokens: 20, CostMicroUSD: 7, ToolCalls: 1, Turns: 1}
		written := func() int64 {
			t.Helper()
			n, err := st.Tenant(tn.ID).Usage().DayTokens(ctx, "2030-05-01")
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		t.Run("usage adds up in memory and counts for quotas before it is written", func(t *testing.T) {
			m.add(turn)
			m.add(turn)
			m.add(store.Usage{TenantID: tn.ID, Day: "2030-05-02", BotID: "bot_1", InputTokens: 5})
			if got := m.pendingTokens(tn.ID, "2030-05-01"); got != 240 {
				t.Fatalf("pending %d, want 240", got)
			}
			if got := written(); got != 0 {
				t.Fatalf("written before a flush: %d", got)
			}
		})
		t.Run("a flush that fails keeps all of it for the next", func(t *testing.T) {
			failed, cancel := context.WithCancel(ctx)
			cancel()
			if err := m.flush(failed); err == nil {
				t.Fatal("a flush with a cancelled context succeeded")
			}
			if got := m.pendingTokens(tn.ID, "2030-05-01"); got != 240 {
				t.Fatalf("pending %d after a failed flush, want 240", got)
			}
		})
		t.Run("a flush writes the sums and empties the meter", func(t *testing.T) {
			if err := m.flush(ctx); err != nil {
				t.Fatal(err)
			}
			if got := written(); got != 240 {
				t.Fatalf("written %d, want 240", got)
			}
			rows, err := st.Tenant(tn.ID).Usage().Sum(ctx, "2030-05-01", "2030-05-01", store.GroupByKey)
			if err != nil || len(rows) != 1 || rows[0].Turns != 2 || rows[0].ToolCalls != 2 || rows[0].CostMicroUSD != 14 {
				t.Fatalf("usage %+v, %v", rows, err)
			}
			if got := m.pendingTokens(tn.ID, "2030-05-01"); got != 0 {
				t.Fatalf("pending %d after a flush", got)
			}
		})
		t.Run("the next flush adds to what is written", func(t *testing.T) {
			m.add(turn)
			if err := m.flush(ctx); err != nil {
				t.Fatal(err)
			}
			if got := written(); got != 360 {
				t.Fatalf("written %d, want 360", got)
			}
		})
	})
}
