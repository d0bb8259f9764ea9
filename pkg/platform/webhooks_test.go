package platform_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/webhook"
)

func TestWebhookInputIsCheckedWithPointers(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		_, p := e.tenantWithKey(t, "acme")
		cases := []struct {
			name     string
			in       platform.WebhookInput
			pointers []string
		}{
			{"a missing URL and no events", platform.WebhookInput{}, []string{"/url", "/events"}},
			{"a URL that is not http", platform.WebhookInput{URL: "ftp://x.example/", Events: []string{"*"}}, []string{"/url"}},
			{"credentials in the URL", platform.WebhookInput{URL: "https://u:p@x.example/", Events: []string{"*"}}, []string{"/url"}},
			{"an unknown event type", platform.WebhookInput{URL: "https://x.example/", Events: []string{"dialog.created", "dialog.exploded"}}, []string{"/events/1"}},
			{"a bot of no one", platform.WebhookInput{URL: "https://x.example/", Events: []string{"*"}, Bot: "nope"}, []string{"/bot"}},
			{"a secret not in whsec_ form", platform.WebhookInput{URL: "https://x.example/", Events: []string{"*"}, Secret: "hunter2"}, []string{"/secret"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, err := e.svc.Webhooks().Create(ctx, p, "acme", tc.in)
				wantInvalid(t, err, tc.pointers...)
				if tc.in.Secret != "" && strings.Contains(err.Error(), tc.in.Secret) {
					t.Fatalf("the error repeats the secret: %v", err)
				}
			})
		}
	})
}

func TestAWebhookURLTheOutboundPolicyRefusesIsRefusedOnSave(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		svc := platformtest.New(t, e.store, platform.Options{Sealer: mustSealer(t), OutboundPolicy: &outbound.Policy{}})
		if _, _, err := svc.Tenants().Create(ctx, platform.Operator(), platform.CreateTenantInput{Slug: "acme", Name: "Acme"}); err != nil {
			t.Fatal(err)
		}
		_, err := svc.Webhooks().Create(ctx, platform.Operator(), "acme", platform.WebhookInput{URL: "http://169.254.169.254/latest", Events: []string{"*"}})
		wantInvalid(t, err, "/url")
	})
}

// TestAWebhookLifecycle drives one endpoint through what its owner does:
// create, test, read the log, see it disabled, fix, replay, rotate.
func TestAWebhookLifecycle(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		_, p := e.tenantWithKey(t, "acme")
		var failing atomic.Bool
		failing.Store(true)
		var prevKey []byte
		r := newReceiver(t, &testClock{}, "owner's", true, func(k, a int) int {
			if failing.Load() {
				return http.StatusServiceUnavailable
			}
			return http.StatusOK
		})
		w := &hookWorld{tenant: "acme", rs: []*receiver{r}, policy: testPolicy(t, []*receiver{r})}
		h, err := e.svc.Webhooks().Create(ctx, p, "acme", platform.WebhookInput{URL: r.srv.URL + "/hook", Events: []string{webhook.DialogCreated}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(h.Secret, "whsec_") || !h.Enabled {
			t.Fatalf("new webhook: secret %.6q..., enabled %v", h.Secret, h.Enabled)
		}
		r.key, _ = webhook.SecretKey(h.Secret)
		d := newTestDelivererSchedule(t, e.svc, w, testSchedule[:3])
		stop := run(e.svc, d)
		defer stop()

		t.Run("a test event fails on every step of the schedule and disables the endpoint", func(t *testing.T) {
			sent, err := e.svc.Webhooks().Test(ctx, p, "acme", h.ID)
			if err != nil {
				t.Fatal(err)
			}
			got := waitDelivery(t, e.svc, p, h.ID, sent.ID)
			if got.Status != "failed" || len(got.Attempts) != 3 || got.EventType != webhook.Test {
				t.Fatalf("delivery %+v, want failed after 3 attempts of a webhook.test", got)
			}
			a := got.Attempts[0]
			if a.Status != http.StatusServiceUnavailable || a.Response != "answer 503" || a.DurationMS < 0 {
				t.Fatalf("attempt log %+v, want the 503, its body and a duration", a)
			}
			hook, err := e.svc.Webhooks().Get(ctx, p, "acme", h.ID)
			if err != nil {
				t.Fatal(err)
			}
			if hook.Enabled || !strings.Contains(hook.DisabledReason, "every attempt failed") {
				t.Fatalf("endpoint enabled %v, reason %q; want disabled saying why", hook.Enabled, hook.DisabledReason)
			}
		})
		t.Run("once enabled again a replay delivers the same event", func(t *testing.T) {
			failing.Store(false)
			on := true
			if _, err := e.svc.Webhooks().Update(ctx, p, "acme", h.ID, platform.WebhookPatch{Enabled: &on}); err != nil {
				t.Fatal(err)
			}
			log, _, err := e.svc.Webhooks().ListDeliveries(ctx, p, "acme", h.ID, platform.ListOptions{})
			if err != nil || len(log) != 1 {
				t.Fatalf("log %+v, %v", log, err)
			}
			if _, err := e.svc.Webhooks().ReplayDelivery(ctx, p, "acme", h.ID, log[0].ID); err != nil {
				t.Fatal(err)
			}
			got := waitDelivery(t, e.svc, p, h.ID, log[0].ID)
			if got.Status != "succeeded" || got.EventID != log[0].EventID {
				t.Fatalf("replayed delivery %+v, want succeeded with event %s", got, log[0].EventID)
			}
		})
		t.Run("after a rotation both secrets sign until the overlap ends", func(t *testing.T) {
			prevKey = r.key
			rotated, err := e.svc.Webhooks().RotateSecret(ctx, p, "acme", h.ID, "")
			if err != nil {
				t.Fatal(err)
			}
			if rotated.Secret == h.Secret || rotated.PreviousSecretExpiresAt == nil {
				t.Fatalf("rotation: new secret %v, overlap until %v", rotated.Secret != h.Secret, rotated.PreviousSecretExpiresAt)
			}
			if left := time.Until(*rotated.PreviousSecretExpiresAt); left < platform.RotationOverlap-time.Minute {
				t.Fatalf("overlap ends in %v, want %v", left, platform.RotationOverlap)
			}
			for _, key := range [][]byte{prevKey, mustKey(t, rotated.Secret)} {
				r.key = key // a receiver holding either secret
				sent, err := e.svc.Webhooks().Test(ctx, p, "acme", h.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got := waitDelivery(t, e.svc, p, h.ID, sent.ID); got.Status != "succeeded" {
					t.Fatalf("delivery to a receiver with one of the secrets: %+v", got)
				}
			}
			if bad := r.bad.Load(); bad != 0 {
				t.Fatalf("%d requests failed verification", bad)
			}
		})
	})
}

func mustKey(t *testing.T, secret string) []byte {
	t.Helper()
	k, err := webhook.SecretKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newTestDelivererSchedule(t *testing.T, svc *platform.Service, w *hookWorld, schedule []time.Duration) *platform.Deliverer {
	d, err := svc.Webhooks().NewDeliverer(platform.DelivererOptions{
		Client:   outbound.NewClient(w.policy, outbound.Options{MaxRedirects: -1}),
		Schedule: schedule, Timeout: time.Second, Poll: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// waitDelivery waits until the delivery is no longer pending.
func waitDelivery(t *testing.T, svc *platform.Service, p *platform.Principal, hook, id string) platform.WebhookDelivery {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		log, _, err := svc.Webhooks().ListDeliveries(ctx, p, "acme", hook, platform.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range log {
			if d.ID == id && d.Status != "pending" {
				return d
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery %s still pending", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTheOutboxForgetsSettledEventsPastTheRetention(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		_, p := e.tenantWithKey(t, "acme")
		h, err := e.svc.Webhooks().Create(ctx, p, "acme", platform.WebhookInput{URL: "https://hooks.example.com/", Events: []string{"*"}})
		if err != nil {
			t.Fatal(err)
		}
		settled, err := e.svc.Webhooks().Test(ctx, p, "acme", h.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.store.DB().Exec("UPDATE webhook_deliveries SET status = 'succeeded' WHERE id = ?", settled.ID).Error; err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Webhooks().Test(ctx, p, "acme", h.ID); err != nil { // still pending
			t.Fatal(err)
		}
		n, err := e.store.Outbox().Prune(ctx, time.Now().Add(time.Minute), 100)
		if err != nil || n != 1 {
			t.Fatalf("pruned %d, %v; want the settled event only", n, err)
		}
		log, _, err := e.svc.Webhooks().ListDeliveries(ctx, p, "acme", h.ID, platform.ListOptions{})
		if err != nil || len(log) != 1 || log[0].Status != "pending" {
			t.Fatalf("log after pruning: %+v, %v", log, err)
		}
	})
}
