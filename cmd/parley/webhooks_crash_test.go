package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/store/storetest"
	"github.com/parleyhq/parley/pkg/webhook"
)

// webhookCrashes is how many times the webhook crash tests kill a server.
const webhookCrashes = 3

// hookReceiver is a tenant's endpoint: it verifies each signature and
// counts the 2xx answers it gave per webhook-id. It takes a few
// milliseconds per event, so a kill lands among deliveries in flight.
type hookReceiver struct {
	srv *httptest.Server
	key []byte

	mu       sync.Mutex
	accepted map[string]int
	bad      int
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{accepted: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		key := r.key
		r.mu.Unlock()
		if err := webhook.Verify(key, req.Header, body, time.Now()); err != nil {
			r.mu.Lock()
			r.bad++
			r.mu.Unlock()
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		time.Sleep(3 * time.Millisecond)
		r.mu.Lock()
		r.accepted[req.Header.Get(webhook.HeaderID)]++
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// counts returns how many events were taken, how many more than once, and
// how many requests failed verification.
func (r *hookReceiver) counts() (taken, dups, bad int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.accepted {
		dups += n - 1
	}
	return len(r.accepted), dups, r.bad
}

func (r *hookReceiver) waitTaken(t *testing.T, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		taken, _, _ := r.counts()
		if taken >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the receiver took %d events of %d within %v", taken, n, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *hookReceiver) allow(env parleyEnv) {
	u, _ := url.Parse(r.srv.URL)
	env["PARLEY_OUTBOUND_ALLOW"], env["PARLEY_OUTBOUND_PORTS"] = "127.0.0.1/32", u.Port()
}

// setupHook creates the tenant, a bot with two versions and an endpoint
// for bot.version_published, and returns the tenant's admin key.
func setupHook(t *testing.T, base string, r *hookReceiver) string {
	t.Helper()
	ctx := context.Background()
	created, err := apiclient.New(base, e2eToken).CreateTenant(ctx, apiclient.CreateTenantRequest{Slug: "acme", Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	admin := apiclient.New(base, created.APIKey.Key)
	if _, err := admin.CreateBot(ctx, "acme", "echo", json.RawMessage(chatConfig)); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateVersion(ctx, "acme", "echo", json.RawMessage(strings.Replace(chatConfig, `"Hi"`, `"Hello"`, 1))); err != nil {
		t.Fatal(err)
	}
	h, err := admin.CreateWebhook(ctx, "acme", apiclient.CreateWebhookRequest{URL: r.srv.URL + "/hook", Events: []string{webhook.BotVersionPublished}})
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.key, err = webhook.SecretKey(h.Secret)
	r.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	return created.APIKey.Key
}

// publishEvents publishes the bot n times through the servers in turn,
// each publish a fact with its event; a server being killed is skipped.
func publishEvents(t *testing.T, servers func() []*process, key string, n int) {
	t.Helper()
	for i := 0; i < n; {
		ss := servers()
		p := ss[i%len(ss)]
		_, err := apiclient.New(p.URL, key).Publish(context.Background(), "acme", "echo", 1+i%2)
		if err != nil {
			time.Sleep(10 * time.Millisecond) // the server is down; the next one (or its successor) takes it
			continue
		}
		i++
	}
}

func webhookEventCount(t *testing.T) int {
	if v := os.Getenv("PARLEY_TEST_WEBHOOK_EVENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("PARLEY_TEST_WEBHOOK_EVENTS=%q", v)
		}
		return n
	}
	return 1000
}

// TestSIGKILLMidDeliveryLosesNoWebhook publishes events through the real
// program and kills it with SIGKILL while it delivers them, several times:
// on SQLite one server, restarted on its data dir; on PostgreSQL two
// servers, one of them killed and restarted each time. Every event must
// reach the receiver; one goes twice only when a server died after the
// receiver answered and before the answer was written.
func TestSIGKILLMidDeliveryLosesNoWebhook(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills servers")
	}
	bin := parleyBinary(t)
	n := webhookEventCount(t)
	run := func(t *testing.T, env parleyEnv, instances int) {
		r := newHookReceiver(t)
		r.allow(env)
		env["PARLEY_PLATFORM_TOKEN"], env["PARLEY_SECRET_KEY"] = e2eToken, strings.Repeat("cd", 32)
		var mu sync.Mutex
		servers := make([]*process, instances)
		for i := range servers {
			servers[i] = startProcess(t, bin, env)
		}
		current := func() []*process { mu.Lock(); defer mu.Unlock(); return append([]*process(nil), servers...) }
		key := setupHook(t, servers[0].URL, r)
		start := time.Now()
		done := make(chan struct{})
		go func() { defer close(done); publishEvents(t, current, key, n) }()
		for k := range webhookCrashes {
			r.waitTaken(t, (k+1)*n/(webhookCrashes+2), 5*time.Minute)
			mu.Lock()
			victim := servers[0]
			mu.Unlock()
			victim.kill()
			restarted := startProcess(t, bin, env)
			mu.Lock()
			servers[0] = restarted
			mu.Unlock()
		}
		<-done
		// On PostgreSQL what a killed server held is due again when its
		// claims lapse (60 s). A publish whose answer a kill cut off may
		// have committed, and was published again: its events count too,
		// so the outbox, not n, says how many there are.
		events := waitDelivered(t, current()[0].URL, key, 5*time.Minute)
		r.waitTaken(t, events, time.Minute)
		time.Sleep(time.Second) // a duplicate would come now, if at all
		taken, dups, bad := r.counts()
		t.Logf("%d publishes, %d events, %d servers, %d SIGKILLs: taken %d, duplicates %d, bad signatures %d, in %v",
			n, events, instances, webhookCrashes, taken, dups, bad, time.Since(start).Round(time.Second))
		if taken != events || events < n || bad != 0 {
			t.Fatalf("taken %d of %d events (%d publishes), %d bad signatures", taken, events, n, bad)
		}
		if dups > 16*webhookCrashes {
			t.Fatalf("%d duplicates; at most the attempts in flight at each kill (16) may repeat", dups)
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		run(t, parleyEnv{"PARLEY_DATA_DIR": t.TempDir()}, 1)
	})
	if u := os.Getenv(storetest.EnvDatabaseURL); u != "" {
		t.Run("postgres, two servers", func(t *testing.T) {
			run(t, parleyEnv{"PARLEY_DATA_DIR": t.TempDir(), "PARLEY_DATABASE_URL": freshSchema(t, u)}, 2)
		})
	}
}

// waitDelivered waits until the endpoint's delivery log holds nothing
// pending, every delivery succeeded, and returns how many there are.
func waitDelivered(t *testing.T, base, key string, within time.Duration) int {
	t.Helper()
	cl := apiclient.New(base, key)
	ctx := context.Background()
	hooks, err := cl.ListWebhooks(ctx, "acme")
	if err != nil || len(hooks.Webhooks) != 1 {
		t.Fatalf("webhooks %+v, %v", hooks, err)
	}
	id := hooks.Webhooks[0].ID
	deadline := time.Now().Add(within)
	for {
		total, pending, failed := 0, 0, 0
		for cursor := ""; ; {
			var page apiclient.WebhookDeliveryList
			err := cl.Do(ctx, "GET", "/v1/tenants/acme/webhooks/"+id+"/deliveries?limit=200&cursor="+cursor, nil, &page)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range page.Deliveries {
				total++
				switch d.Status {
				case "pending":
					pending++
				case "failed":
					failed++
				}
			}
			if cursor = page.NextCursor; cursor == "" {
				break
			}
		}
		if failed > 0 {
			t.Fatalf("%d of %d deliveries failed", failed, total)
		}
		if pending == 0 {
			return total
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries still pending after %v", pending, total, within)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
