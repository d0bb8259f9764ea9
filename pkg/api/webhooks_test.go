package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

func TestWebhookRoutesShowTheSecretOnceAndSayWhatIsWrong(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		key := e.mustCreateTenant(t, "acme")
		cl := e.client(key)
		ctx := context.Background()
		h, err := cl.CreateWebhook(ctx, "acme", apiclient.CreateWebhookRequest{URL: "https://hooks.acme.example/in", Events: []string{"dialog.created"}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(h.Secret, "whsec_") || !h.Enabled {
			t.Fatalf("created %+v", h.Webhook)
		}
		t.Run("an endpoint goes over the wire with exactly its fields", func(t *testing.T) {
			var one apiclient.Webhook
			wantKeys(t, e.strictGet(t, "/v1/tenants/acme/webhooks/"+h.ID, key, &one),
				[]string{"id", "url", "events", "enabled", "created_at", "updated_at"})
			var list apiclient.WebhookList
			wantKeys(t, e.strictGet(t, "/v1/tenants/acme/webhooks", key, &list),
				[]string{"id", "url", "events", "enabled", "created_at", "updated_at"}, "webhooks", 0)
		})
		t.Run("no later answer holds the secret", func(t *testing.T) {
			for _, path := range []string{"/v1/tenants/acme/webhooks", "/v1/tenants/acme/webhooks/" + h.ID, "/v1/tenants/acme/webhooks/" + h.ID + "/deliveries"} {
				if r := e.raw(t, "GET", path, key, ""); r.StatusCode != http.StatusOK || strings.Contains(r.body, h.Secret) || strings.Contains(r.body, "secret\":") {
					t.Fatalf("GET %s: %d %s", path, r.StatusCode, r.body)
				}
			}
		})
		t.Run("rotating without a body answers the new secret", func(t *testing.T) {
			r := e.raw(t, "POST", "/v1/tenants/acme/webhooks/"+h.ID+"/rotate-secret", key, "")
			if r.StatusCode != http.StatusOK || !strings.Contains(r.body, `"secret":"whsec_`) || strings.Contains(r.body, h.Secret) ||
				!strings.Contains(r.body, "previous_secret_expires_at") {
				t.Fatalf("rotate: %d %s", r.StatusCode, r.body)
			}
		})
		t.Run("bad input is a 422 with a pointer per problem", func(t *testing.T) {
			r := e.raw(t, "POST", "/v1/tenants/acme/webhooks", key, `{"url": "ftp://x", "events": ["dialog.created", "nope"]}`)
			if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, `"pointer":"/url"`) || !strings.Contains(r.body, `"pointer":"/events/1"`) {
				t.Fatalf("create: %d %s", r.StatusCode, r.body)
			}
		})
		t.Run("a PATCH disables and a test event is logged", func(t *testing.T) {
			off := false
			got, err := cl.UpdateWebhook(ctx, "acme", h.ID, apiclient.UpdateWebhookRequest{Enabled: &off})
			if err != nil || got.Enabled || got.DisabledReason == "" {
				t.Fatalf("patch: %+v, %v", got, err)
			}
			d, err := cl.TestWebhook(ctx, "acme", h.ID)
			if err != nil || d.EventType != "webhook.test" || d.Status != "pending" {
				t.Fatalf("test: %+v, %v", d, err)
			}
			log, err := cl.ListWebhookDeliveries(ctx, "acme", h.ID, "")
			if err != nil || len(log.Deliveries) != 1 || log.Deliveries[0].ID != d.ID {
				t.Fatalf("log: %+v, %v", log, err)
			}
			var strict apiclient.WebhookDeliveryList
			body := e.strictGet(t, "/v1/tenants/acme/webhooks/"+h.ID+"/deliveries", key, &strict)
			wantKeys(t, body, []string{"deliveries"})
			wantKeys(t, body, []string{"id", "event_id", "event_type", "status", "attempts", "next_attempt_at", "created_at"}, "deliveries", 0)
			if err := cl.DeleteWebhook(ctx, "acme", h.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := cl.GetWebhook(ctx, "acme", h.ID); err == nil {
				t.Fatal("a deleted webhook is still there")
			}
		})
	})
}
