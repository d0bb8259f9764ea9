package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
)

func TestAChannelDeliveryIsClaimedOnceThenReplayed(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn, ch := mustChannel(t, st, "webhook")
		ts := st.Tenant(tn.ID)
		t.Run("of many concurrent claims of one delivery exactly one wins", func(t *testing.T) {
			var wg sync.WaitGroup
			var mu sync.Mutex
			won := 0
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ok, _, err := ts.Channels().ClaimDelivery(ctx, ch.ID, "upd-1")
					if err != nil && !errors.Is(err, store.ErrConflict) {
						t.Error(err)
					}
					mu.Lock()
					defer mu.Unlock()
					if ok {
						won++
					}
				}()
			}
			wg.Wait()
			if won != 1 {
				t.Fatalf("%d claims won, want 1", won)
			}
		})
		t.Run("a finished delivery is replayed with its response", func(t *testing.T) {
			if err := ts.Channels().FinishDelivery(ctx, ch.ID, "upd-1", `{"text":"hi"}`); err != nil {
				t.Fatal(err)
			}
			ok, first, err := ts.Channels().ClaimDelivery(ctx, ch.ID, "upd-1")
			if err != nil || ok || first.Status != store.ChannelDeliveryDone || first.Response != `{"text":"hi"}` {
				t.Fatalf("claim again: %v %+v %v", ok, first, err)
			}
		})
		t.Run("a released delivery may be claimed again; a finished one is not released", func(t *testing.T) {
			if ok, _, _ := ts.Channels().ClaimDelivery(ctx, ch.ID, "upd-2"); !ok {
				t.Fatal("a new delivery was not claimed")
			}
			for _, id := range []string{"upd-1", "upd-2"} {
				if err := ts.Channels().ReleaseDelivery(ctx, ch.ID, id); err != nil {
					t.Fatal(err)
				}
			}
			if ok, _, _ := ts.Channels().ClaimDelivery(ctx, ch.ID, "upd-2"); !ok {
				t.Fatal("a released delivery was not claimed again")
			}
			if ok, _, _ := ts.Channels().ClaimDelivery(ctx, ch.ID, "upd-1"); ok {
				t.Fatal("releasing forgot a finished delivery")
			}
		})
		t.Run("pruning forgets old deliveries", func(t *testing.T) {
			n, err := st.ChannelJobs().PruneDeliveries(ctx, time.Now().Add(time.Hour))
			if err != nil || n != 2 {
				t.Fatalf("pruned %d, %v; want 2", n, err)
			}
			if ok, _, _ := ts.Channels().ClaimDelivery(ctx, ch.ID, "upd-1"); !ok {
				t.Fatal("a pruned delivery id is still remembered")
			}
		})
		t.Run("erasing an end user forgets their conversations' ids", func(t *testing.T) {
			d := &store.Dialog{TenantID: tn.ID, BotID: ch.BotID, VersionNumber: 1, UserID: "tg-77", Channel: "webhook", Context: "{}", State: "{}"}
			if err := st.Tenant(d.TenantID).Dialogs().Create(ctx, d); err != nil {
				t.Fatal(err)
			}
			conv := &store.ChannelConversation{TenantID: tn.ID, ChannelID: ch.ID, ExternalID: "chat-4242", UserID: "tg-77", DialogID: d.ID}
			if err := st.Tenant(conv.TenantID).Channels().MapConversation(ctx, conv, ""); err != nil {
				t.Fatal(err)
			}
			if _, err := ts.Dialogs().EraseEndUser(ctx, "tg-77", time.Now()); err != nil {
				t.Fatal(err)
			}
			if _, err := ts.Channels().Conversation(ctx, ch.ID, "chat-4242"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("the erased user's conversation is still mapped: %v", err)
			}
		})
		t.Run("another tenant's channel is not found", func(t *testing.T) {
			other := mustTenant(t, st, "globex")
			if _, err := st.Tenant(other.ID).Channels().Get(ctx, ch.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("get another tenant's channel: %v", err)
			}
		})
	})
}

// mustChannel creates the tenant acme with the bot support and a channel
// of kind for it.
func mustChannel(t *testing.T, st *store.Store, kind string) (*store.Tenant, *store.Channel) {
	t.Helper()
	tn := mustTenant(t, st, "acme")
	b := mustBot(t, st, tn.ID, "support")
	ch := &store.Channel{TenantID: tn.ID, BotID: b.ID, Kind: kind, Enabled: true, Config: "{}"}
	if err := st.Tenant(ch.TenantID).Channels().Create(context.Background(), ch); err != nil {
		t.Fatal(err)
	}
	return tn, ch
}
