package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
)

func TestAChannelJobIsQueuedWithItsDeliveryAndWorkedByOneClaimAtATime(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn, ch := mustChannel(t, st, "telegram")
		queue := func(deliveryID string) bool {
			t.Helper()
			ok, _, err := st.Tenant(tn.ID).Channels().QueueDelivery(ctx, store.ChannelDelivery{TenantID: tn.ID, ChannelID: ch.ID, DeliveryID: deliveryID,
				Status: store.ChannelDeliveryDone}, &store.ChannelJob{TenantID: tn.ID, ChannelID: ch.ID, Kind: store.ChannelJobAnswer,
				DeliveryID: deliveryID, Conversation: "4242", Text: "hi"})
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		jobs := func() int64 {
			var n int64
			if err := st.DB().Model(&store.ChannelJob{}).Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}
		t.Run("a retried delivery queues nothing more", func(t *testing.T) {
			if !queue("upd-1") || queue("upd-1") || jobs() != 1 {
				t.Fatalf("%d jobs, want the first delivery's only", jobs())
			}
		})
		var claimed store.ChannelJob
		t.Run("of concurrent claims one gets the job", func(t *testing.T) {
			var wg sync.WaitGroup
			var mu sync.Mutex
			var got []store.ChannelJob
			for i := range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					js, err := st.ChannelJobs().Claim(ctx, st.Instance()+"/clm-"+string(rune('a'+i)), time.Minute, 5, nil)
					if err != nil {
						t.Error(err)
					}
					mu.Lock()
					got = append(got, js...)
					mu.Unlock()
				}()
			}
			wg.Wait()
			if len(got) != 1 || got[0].Attempts != 1 || got[0].Text != "hi" {
				t.Fatalf("claimed %+v, want the one job once", got)
			}
			claimed = got[0]
		})
		t.Run("a stale claim writes nothing", func(t *testing.T) {
			stale := claimed
			stale.Claim = "someone-else"
			if err := st.ChannelJobs().Finish(ctx, &stale); !errors.Is(err, store.ErrConflict) {
				t.Fatalf("finish with a stale claim: %v, want ErrConflict", err)
			}
		})
		t.Run("an answered job keeps its claim and becomes the sending of the reply", func(t *testing.T) {
			if err := st.ChannelJobs().Answered(ctx, &claimed, "dlg_1", "hello"); err != nil {
				t.Fatal(err)
			}
			if js, _ := st.ChannelJobs().Claim(ctx, st.Instance()+"/clm-z", time.Minute, 5, nil); len(js) != 0 {
				t.Fatalf("claimed %+v while its lease holds", js)
			}
		})
		t.Run("a job retried later is not due; released claims are due at once", func(t *testing.T) {
			if err := st.ChannelJobs().Retry(ctx, &claimed, time.Now().Add(time.Hour), "busy"); err != nil {
				t.Fatal(err)
			}
			if n, err := st.ChannelJobs().Due(ctx); err != nil || n != 0 {
				t.Fatalf("%d due, %v", n, err)
			}
			if err := st.DB().Model(&store.ChannelJob{}).Where("id = ?", claimed.ID).Update("claim", "gone").Error; err != nil {
				t.Fatal(err)
			}
			if n, err := st.ChannelJobs().ReleaseClaims(ctx, time.Now().UTC()); err != nil || n != 1 {
				t.Fatalf("released %d, %v", n, err)
			}
			js, err := st.ChannelJobs().Claim(ctx, st.Instance()+"/clm-y", time.Minute, 5, nil)
			if err != nil || len(js) != 1 || js[0].Kind != store.ChannelJobSend || js[0].Text != "hello" || js[0].DialogID != "dlg_1" {
				t.Fatalf("claimed %+v, %v; want the reply to send", js, err)
			}
			if err := st.ChannelJobs().Finish(ctx, &js[0]); err != nil || jobs() != 0 {
				t.Fatalf("finish: %v; %d jobs left", err, jobs())
			}
		})
		if st.Dialect() == store.DialectPostgres {
			t.Run("a dead instance's claim is taken at once on PostgreSQL", func(t *testing.T) {
				queue("upd-2")
				if err := st.DB().Model(&store.ChannelJob{}).Where("delivery_id = ?", "upd-2").
					Updates(map[string]any{"claim": "live:dead-host-1-abc/clm", "next_attempt_at": time.Now().Add(time.Hour)}).Error; err != nil {
					t.Fatal(err)
				}
				js, err := st.ChannelJobs().Claim(ctx, st.Instance()+"/clm-x", time.Minute, 5, nil)
				if err != nil || len(js) != 1 || js[0].DeliveryID != "upd-2" {
					t.Fatalf("claimed %+v, %v; want the dead instance's job", js, err)
				}
			})
		}
	})
}
