package store_test

import (
	"context"
	"testing"

	"github.com/parleyhq/parley/pkg/store"
)

func TestUsageOfVersionsMetersEachVersionApart(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "acme")
		other := mustTenant(t, st, "globex")
		b := mustBot(t, st, tn.ID, "support")
		ob := mustBot(t, st, other.ID, "support")
		dialog := func(bot *store.Bot, version int, preview bool, tokens ...int) {
			d := &store.Dialog{TenantID: bot.TenantID, BotID: bot.ID, VersionNumber: version, Preview: preview, Context: "{}", State: "{}"}
			if err := st.Tenant(d.TenantID).Dialogs().Create(ctx, d); err != nil {
				t.Fatal(err)
			}
			for _, n := range tokens {
				m := &store.Message{TenantID: d.TenantID, DialogID: d.ID, Kind: "assistant", Role: "assistant", Status: "complete",
					BotVersion: version, InputTokens: n, OutputTokens: n / 10}
				if err := st.Tenant(m.TenantID).Messages().Append(ctx, m); err != nil {
					t.Fatal(err)
				}
			}
		}
		dialog(b, 1, false, 100, 200)
		dialog(b, 1, false)
		dialog(b, 2, false, 50)
		dialog(b, 2, true, 1000)   // a preview is no canary traffic
		dialog(ob, 2, false, 7000) // another tenant's bot
		got, err := st.Tenant(tn.ID).Versions().Usage(ctx, b.ID, []int{1, 2})
		if err != nil {
			t.Fatal(err)
		}
		want := map[int]store.VersionUsage{
			1: {Version: 1, Dialogs: 2, InputTokens: 300, OutputTokens: 30},
			2: {Version: 2, Dialogs: 1, InputTokens: 50, OutputTokens: 5},
		}
		if got[1] != want[1] || got[2] != want[2] {
			t.Fatalf("usage = %+v, want %+v", got, want)
		}
	})
}
