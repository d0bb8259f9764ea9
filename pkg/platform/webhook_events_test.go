package platform_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/webhook"
)

// outbox returns the tenant-wide outbox rows, oldest first.
func outbox(t *testing.T, st *store.Store) []store.WebhookEvent {
	t.Helper()
	var rows []store.WebhookEvent
	if err := st.DB().Order("id").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		platformtest.WantWebhookSchema(t, r.Type, r.Body)
	}
	return rows
}

func TestFactsWriteTheirEventsOnlyWhenAnEndpointSubscribes(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		_, p := e.tenantWithKey(t, "acme")
		e.bot(t, p, "acme", "support")
		if _, err := e.svc.Versions().Publish(ctx, p, "acme", "support", 1); err != nil {
			t.Fatal(err)
		}
		if rows := outbox(t, e.store); len(rows) != 0 {
			t.Fatalf("a tenant without webhooks has %d outbox rows", len(rows))
		}
		if _, err := e.svc.Webhooks().Create(ctx, p, "acme", platform.WebhookInput{URL: "https://hooks.example.com/",
			Events: []string{webhook.BotVersionPublished, webhook.UsageQuotaReached}}); err != nil {
			t.Fatal(err)
		}
		t.Run("publishing writes bot.version_published with the envelope", func(t *testing.T) {
			if _, err := e.svc.Versions().Publish(ctx, p, "acme", "support", 1); err != nil {
				t.Fatal(err)
			}
			rows := outbox(t, e.store)
			if len(rows) != 1 || rows[0].Type != webhook.BotVersionPublished {
				t.Fatalf("outbox %+v", rows)
			}
			var env struct {
				Type      string    `json:"type"`
				Timestamp time.Time `json:"timestamp"`
				Tenant    string    `json:"tenant"`
				Data      struct {
					Bot         string `json:"bot"`
					Version     int    `json:"version"`
					Previous    int    `json:"previous_version"`
					PublishedBy string `json:"published_by"`
				} `json:"data"`
			}
			if err := json.Unmarshal([]byte(rows[0].Body), &env); err != nil {
				t.Fatal(err)
			}
			if env.Type != webhook.BotVersionPublished || env.Tenant != "acme" || env.Timestamp.IsZero() ||
				env.Data.Bot != "support" || env.Data.Version != 1 || env.Data.Previous != 1 || env.Data.PublishedBy == "" {
				t.Fatalf("envelope %+v", env)
			}
		})
		t.Run("a quota is reached once a day however often it is found spent", func(t *testing.T) {
			tn, _ := e.svc.Tenants().Get(ctx, p, "acme")
			for range 3 {
				e.svc.Webhooks().QuotaReached(ctx, tn.ID, "2026-01-02", 1000, 1200, time.Now())
			}
			n := 0
			for _, r := range outbox(t, e.store) {
				if r.Type == webhook.UsageQuotaReached {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("%d usage.quota_reached events, want 1", n)
			}
		})
	})
}

// Erasure finds a dialog's events by the dialog they name, so an event
// about a dialog that names none is a writer's bug: refused before the
// fact is written, whether or not an endpoint subscribes.
func TestAnEventAboutADialogMustNameIt(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		tn, _ := e.tenantWithKey(t, "acme")
		for _, typ := range []string{webhook.DialogCreated, webhook.MessageCreated, webhook.DialogClosed, webhook.ToolFailed} {
			ran := false
			err := e.svc.Webhooks().WithEvent(ctx, platform.Event{TenantID: tn.ID, Type: typ}, func(*store.Store) (any, error) {
				ran = true
				return nil, nil
			})
			if platform.ErrorCode(err) != platform.CodeInternal || ran {
				t.Errorf("%s without a dialog: %v (fact ran: %v); want an internal error and no fact", typ, err, ran)
			}
		}
		err := e.svc.Webhooks().WithEvent(ctx, platform.Event{TenantID: tn.ID, Type: webhook.BotVersionPublished}, func(*store.Store) (any, error) { return nil, nil })
		if err != nil {
			t.Errorf("a tenant-wide event: %v", err)
		}
	})
}
