package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/longtest"
	"github.com/parleyhq/parley/pkg/store/storetest"
	"github.com/parleyhq/parley/pkg/webhook"
)

// webhookCrashes is how many times the webhook crash tests kill a server:
// once in make test, three times in a long run.
var webhookCrashes = longtest.Pick(1, 3)

// maxInFlight is how many attempts a server has in flight at most (the
// deliverer's default concurrency): what one kill may send twice.
const maxInFlight = 16

// hookKind is how a receiver answers. The crash test's tenant has one
// endpoint of each kind.
type hookKind string

const (
	// hookHealthy takes every event, in a few milliseconds, so a kill
	// lands among deliveries in flight.
	hookHealthy hookKind = "healthy"
	// hookThrottled answers each event's first attempt 429 with
	// Retry-After (throttleSeconds) and takes it on the next.
	hookThrottled hookKind = "429 then 2xx"
	// hookFailing answers 500, always: its deliveries wait on the schedule.
	hookFailing hookKind = "500"
	// hookGone answers 410: the endpoint ends disabled.
	hookGone hookKind = "410"
	// hookHanging answers nothing within the attempt timeout
	// (hookTimeout). Each such attempt holds one of a server's slots that
	// long, so this endpoint takes only the few events of a bot of its own
	// (hangingEvents).
	hookHanging hookKind = "timeout"
)

var hookKinds = []hookKind{hookHealthy, hookThrottled, hookFailing, hookGone, hookHanging}

// hookTimeout is the servers' PARLEY_WEBHOOK_TIMEOUT: short, so the hanging
// endpoint's attempts (two each) do not hold the test for half a minute.
const hookTimeout = 2 * time.Second

// throttleSeconds is the Retry-After of hookThrottled: longer than the
// schedule's second step (5 s, at most 6 with jitter), so the delay
// between its attempts shows the header was honoured.
const throttleSeconds = 10

// hangingEvents is about how many events go to hookHanging's bot.
const hangingEvents = 4

// hookReceiver is a tenant's endpoint: it verifies each signature,
// answers as its kind says, and counts per webhook-id the requests it got
// and the 2xx answers it gave.
type hookReceiver struct {
	kind hookKind
	srv  *httptest.Server

	mu       sync.Mutex
	key      []byte
	seen     map[string]int
	accepted map[string]int
	bad      int
}

func newHookReceiver(t *testing.T, kind hookKind) *hookReceiver {
	r := &hookReceiver{kind: kind, seen: map[string]int{}, accepted: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) serve(w http.ResponseWriter, req *http.Request) {
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
	id := req.Header.Get(webhook.HeaderID)
	r.mu.Lock()
	seen := r.seen[id]
	r.seen[id]++
	r.mu.Unlock()
	status := http.StatusNoContent
	switch r.kind {
	case hookThrottled:
		if seen == 0 {
			w.Header().Set("Retry-After", strconv.Itoa(throttleSeconds))
			status = http.StatusTooManyRequests
		}
	case hookFailing:
		status = http.StatusInternalServerError
	case hookGone:
		status = http.StatusGone
	case hookHanging:
		// Until the sender gives up (its timeout, or its death).
		select {
		case <-req.Context().Done():
		case <-time.After(hookTimeout + 5*time.Second):
		}
		status = http.StatusGatewayTimeout
	}
	if status/100 == 2 {
		time.Sleep(3 * time.Millisecond)
		r.mu.Lock()
		r.accepted[id]++
		r.mu.Unlock()
	}
	w.WriteHeader(status)
}

// receiverCounts is what a receiver saw.
type receiverCounts struct {
	// seen is every webhook-id that came with a valid signature;
	// requests how many requests carried them.
	seen     map[string]bool
	requests int
	// accepted is every webhook-id answered 2xx: the distinct events a
	// receiver that dedupes by webhook-id takes, each once. twice counts
	// the 2xx answers beyond the first per id (raw duplicates).
	accepted map[string]bool
	twice    int
	bad      int
}

func (r *hookReceiver) counts() receiverCounts {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := receiverCounts{seen: map[string]bool{}, accepted: map[string]bool{}, bad: r.bad}
	for id, n := range r.seen {
		c.seen[id], c.requests = true, c.requests+n
	}
	for id, n := range r.accepted {
		c.accepted[id], c.twice = true, c.twice+n-1
	}
	return c
}

func (r *hookReceiver) waitTaken(t *testing.T, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		taken := len(r.counts().accepted)
		if taken >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the receiver took %d events of %d within %v", taken, n, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// hookReceivers are the tenant's endpoints, one per kind.
type hookReceivers map[hookKind]*hookReceiver

func newHookReceivers(t *testing.T) hookReceivers {
	rs := hookReceivers{}
	for _, k := range hookKinds {
		rs[k] = newHookReceiver(t, k)
	}
	return rs
}

// allow lets the servers reach the receivers on loopback.
func (rs hookReceivers) allow(env parleyEnv) {
	var ports []string
	for _, r := range rs {
		u, _ := url.Parse(r.srv.URL)
		ports = append(ports, u.Port())
	}
	env["PARLEY_OUTBOUND_ALLOW"], env["PARLEY_OUTBOUND_PORTS"] = "127.0.0.1/32", strings.Join(ports, ",")
}

// setupHooks creates the tenant, a bot "echo" with two versions, a bot
// "slow" with one, and an endpoint for bot.version_published per
// receiver: the hanging one for "slow" only, the others for both bots.
// It returns the tenant's admin key and the endpoint ids by kind.
func setupHooks(t *testing.T, base string, rs hookReceivers) (string, map[hookKind]string) {
	t.Helper()
	ctx := context.Background()
	created, err := apiclient.New(base, e2eToken).CreateTenant(ctx, apiclient.CreateTenantRequest{Slug: "acme", Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	admin := apiclient.New(base, created.APIKey.Key)
	for _, slug := range []string{"echo", "slow"} {
		if _, err := admin.CreateBot(ctx, "acme", slug, json.RawMessage(chatConfig)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.CreateVersion(ctx, "acme", "echo", json.RawMessage(strings.Replace(chatConfig, `"Hi"`, `"Hello"`, 1))); err != nil {
		t.Fatal(err)
	}
	ids := map[hookKind]string{}
	for _, k := range hookKinds {
		req := apiclient.CreateWebhookRequest{URL: rs[k].srv.URL + "/hook", Events: []string{webhook.BotVersionPublished}}
		if k == hookHanging {
			req.Bot = "slow"
		}
		h, err := admin.CreateWebhook(ctx, "acme", req)
		if err != nil {
			t.Fatal(err)
		}
		key, err := webhook.SecretKey(h.Secret)
		if err != nil {
			t.Fatal(err)
		}
		rs[k].mu.Lock()
		rs[k].key = key
		rs[k].mu.Unlock()
		ids[k] = h.ID
	}
	return created.APIKey.Key, ids
}

// publishEvents publishes n times through the servers in turn, each
// publish a fact with its event: bot "slow" about hangingEvents times,
// evenly spread, "echo" the rest. A server being killed is skipped.
func publishEvents(t *testing.T, servers func() []*process, key string, n int) {
	t.Helper()
	every := max(1, n/hangingEvents)
	for i := 0; i < n; {
		ss := servers()
		p := ss[i%len(ss)]
		bot, version := "echo", 1+i%2
		if i%every == every/2 {
			bot, version = "slow", 1
		}
		_, err := apiclient.New(p.URL, key).Publish(context.Background(), "acme", bot, version)
		if err != nil {
			time.Sleep(10 * time.Millisecond) // the server is down; the next one (or its successor) takes it
			continue
		}
		i++
	}
}

// webhookEventCount is how many events the crash test publishes: a few
// dozen in make test, 1,000 in a long run, or PARLEY_TEST_WEBHOOK_EVENTS.
func webhookEventCount(t *testing.T) int {
	if v := os.Getenv("PARLEY_TEST_WEBHOOK_EVENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("PARLEY_TEST_WEBHOOK_EVENTS=%q", v)
		}
		return n
	}
	return longtest.Pick(40, 1000)
}

// TestSIGKILLMidDeliveryLosesNoWebhook publishes events through the real
// program and kills it with SIGKILL while it delivers them, several times:
// on SQLite one server, restarted on its data dir; on PostgreSQL two
// servers, one of them killed and restarted each time. The tenant's
// endpoints are of every kind (hookKinds): healthy, throttling with 429
// and Retry-After, failing with 500, gone with 410, and timing out.
//
// Every event must reach the healthy endpoint and, after its 429, the
// throttled one; an event goes twice (same webhook-id) only when a server
// died after the receiver answered and before the answer was written, so
// at most the attempts in flight at each kill. The failing and hanging
// endpoints got every event of theirs and wait on the retry schedule, the
// 410 one ends disabled with nothing pending.
//
// make test runs it on SQLite with a few dozen events and one kill; a long
// run kills three times among 1,000 events, and on PostgreSQL too, where
// what a killed server held waits for its claims to lapse (the attempt timeout plus 45 s).
func TestSIGKILLMidDeliveryLosesNoWebhook(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills servers")
	}
	t.Parallel()
	bin := parleyBinary(t)
	n := webhookEventCount(t)
	run := func(t *testing.T, env parleyEnv, instances int) {
		rs := newHookReceivers(t)
		rs.allow(env)
		env["PARLEY_PLATFORM_TOKEN"], env["PARLEY_SECRET_KEY"] = e2eToken, strings.Repeat("cd", 32)
		env["PARLEY_WEBHOOK_TIMEOUT"] = hookTimeout.String()
		// Migrated first, with no start-up deadline: on a PostgreSQL
		// shared with other tests, a fresh schema's migrations queue for
		// the database's one migration lock. Restarts find it up to date.
		if code, _, stderr := runParley(t, env, "migrate"); code != 0 {
			t.Fatalf("parley migrate: %d\n%s", code, stderr)
		}
		var mu sync.Mutex
		servers := make([]*process, instances)
		for i := range servers {
			servers[i] = startProcess(t, bin, env)
		}
		current := func() []*process { mu.Lock(); defer mu.Unlock(); return append([]*process(nil), servers...) }
		key, ids := setupHooks(t, servers[0].URL, rs)
		start := time.Now()
		done := make(chan struct{})
		go func() { defer close(done); publishEvents(t, current, key, n) }()
		for k := range webhookCrashes {
			rs[hookHealthy].waitTaken(t, (k+1)*n/(webhookCrashes+2), 5*time.Minute)
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
		t.Logf("%d publishes in %v", n, time.Since(start).Round(time.Second))
		// On PostgreSQL what a killed server held is due again when its
		// claims lapse (the attempt timeout plus 45 s). A publish whose answer a kill cut off may
		// have committed, and was published again: its events count too,
		// so the outbox, not n, says how many there are.
		cl := apiclient.New(current()[0].URL, key)
		logs := waitSettled(t, cl, ids, 10*time.Minute+time.Duration(n)*100*time.Millisecond)
		elapsed := time.Since(start)
		time.Sleep(time.Second) // a duplicate would come now, if at all
		got := map[hookKind]receiverCounts{}
		for _, k := range hookKinds {
			got[k] = rs[k].counts()
		}
		events := len(logs[hookHealthy])
		healthy, throttled := got[hookHealthy], got[hookThrottled]
		t.Logf("%d publishes, %d events, %d servers, %d SIGKILLs, settled in %v: "+
			"healthy: taken %d, distinct after dedupe by webhook-id %d, raw duplicates %d; "+
			"429 then 2xx: distinct %d, raw duplicates %d, deferred %d; 500: %d events, %d requests; "+
			"timeout: %d events, %d requests; 410: %d requests, %d deliveries",
			n, events, instances, webhookCrashes, elapsed.Round(time.Second),
			len(healthy.accepted)+healthy.twice, len(healthy.accepted), healthy.twice,
			len(throttled.accepted), throttled.twice, len(logs[hookThrottled])-len(throttled.accepted), len(got[hookFailing].seen), got[hookFailing].requests,
			len(got[hookHanging].seen), got[hookHanging].requests, got[hookGone].requests, len(logs[hookGone]))

		if events < n {
			t.Fatalf("the healthy endpoint's log holds %d events for %d publishes", events, n)
		}
		for _, k := range hookKinds {
			c := got[k]
			if c.bad != 0 {
				t.Errorf("%s: %d requests failed signature verification", k, c.bad)
			}
			want := eventIDs(logs[k])
			switch k {
			case hookHealthy:
				// Every event, each taken: after dedupe by webhook-id, once.
				if len(want) != events || !maps.Equal(c.accepted, want) {
					t.Errorf("%s: took %d distinct events, the log holds %d of %d: lost or stray events", k, len(c.accepted), len(want), events)
				}
			case hookThrottled:
				// Every event taken, but those a kill deferred, which it saw
				// and answered 429, and whose retry is scheduled.
				taken := maps.Clone(c.accepted)
				for _, d := range logs[k] {
					if deferred(d) && c.seen[d.EventID] && !taken[d.EventID] {
						taken[d.EventID] = true
					}
				}
				if len(want) != events || !maps.Equal(taken, want) {
					t.Errorf("%s: took %d distinct events, %d deferred, the log holds %d of %d: lost or stray events",
						k, len(c.accepted), len(taken)-len(c.accepted), len(want), events)
				}
				if d := len(taken) - len(c.accepted); d > maxInFlight*webhookCrashes {
					t.Errorf("%s: %d deliveries deferred; at most the attempts in flight at each kill (%d) may be", k, d, maxInFlight)
				}
			case hookFailing, hookHanging:
				if len(c.accepted) != 0 || !maps.Equal(c.seen, want) {
					t.Errorf("%s: saw %d events, the log holds %d", k, len(c.seen), len(want))
				}
			case hookGone:
				if len(c.accepted) != 0 || c.requests == 0 {
					t.Errorf("%s: %d requests, %d accepted", k, c.requests, len(c.accepted))
				}
			}
		}
		if len(logs[hookFailing]) != events {
			t.Errorf("the failing endpoint's log holds %d events of %d", len(logs[hookFailing]), events)
		}
		if len(logs[hookHanging]) < min(n, hangingEvents) {
			t.Errorf("the hanging endpoint's log holds %d events, want at least %d", len(logs[hookHanging]), min(n, hangingEvents))
		}
		if twice := healthy.twice + throttled.twice; twice > maxInFlight*webhookCrashes {
			t.Errorf("%d duplicates; at most the attempts in flight at each kill (%d) may repeat", twice, maxInFlight)
		}
		checkRetryAfter(t, logs[hookThrottled])
		checkEndpoints(t, cl, ids, logs)
	}
	t.Run("sqlite", func(t *testing.T) {
		run(t, parleyEnv{"PARLEY_DATA_DIR": t.TempDir()}, 1)
	})
	if u := os.Getenv(storetest.EnvDatabaseURL); u != "" {
		t.Run("postgres, two servers", func(t *testing.T) {
			longtest.Skip(t, "killed servers' claims lapse after 47 s")
			run(t, parleyEnv{"PARLEY_DATA_DIR": t.TempDir(), "PARLEY_DATABASE_URL": storetest.PostgresSchema(t, u)}, 2)
		})
	}
}

func eventIDs(ds []apiclient.WebhookDelivery) map[string]bool {
	ids := make(map[string]bool, len(ds))
	for _, d := range ds {
		ids[d.EventID] = true
	}
	return ids
}

// awaitingRetry is how long after its last recorded attempt a failing
// delivery's next one must be to show it waits on the schedule's third
// step (5 min): past the second (5 s) and past a dead server's claim
// (the attempt timeout plus 45 s from the claim).
const awaitingRetry = 2 * time.Minute

// settled says whether a delivery to an endpoint of kind k is where that
// kind leaves it, or an error if it is somewhere it must never be.
func settled(k hookKind, d apiclient.WebhookDelivery) (bool, error) {
	switch k {
	case hookHealthy:
		return d.Status == "succeeded", unless(d.Status == "failed", "failed: %s", d.LastError)
	case hookThrottled:
		return d.Status == "succeeded" || deferred(d), unless(d.Status == "failed", "failed: %s", d.LastError)
	case hookGone:
		return d.Status == "failed", unless(d.Status == "succeeded", "succeeded")
	default: // failing and hanging: pending, on the schedule
		if d.Status != "pending" {
			return false, fmt.Errorf("%s, want pending on the retry schedule (%s)", d.Status, d.LastError)
		}
		return onSchedule(d), nil
	}
}

// onSchedule says a pending delivery's next attempt is at least
// awaitingRetry after its last recorded one.
func onSchedule(d apiclient.WebhookDelivery) bool {
	if len(d.Attempts) == 0 || d.NextAttemptAt == nil {
		return false
	}
	// The log's order is its ids', which two servers do not share.
	last := slices.MaxFunc(d.Attempts, func(a, b apiclient.WebhookAttempt) int { return a.At.Compare(b.At) })
	return d.NextAttemptAt.Sub(last.At) >= awaitingRetry
}

// deferred says a throttled delivery waits on the schedule's third step
// (5 min) after its 429, not on the Retry-After: a kill cut off an attempt
// of it before the receiver saw it, and that attempt counted. It is not
// lost: its retry is scheduled.
func deferred(d apiclient.WebhookDelivery) bool {
	return d.Status == "pending" && d.LastStatus == http.StatusTooManyRequests && onSchedule(d)
}

// sinceDeferred says an endpoint failing since at is so because of a
// deferred delivery (see deferred): its 429, the last answer it logged,
// came then. On PostgreSQL that answer comes once the kill's claims
// lapsed, after the endpoint's other deliveries succeeded.
func sinceDeferred(at time.Time, ds []apiclient.WebhookDelivery) bool {
	for _, d := range ds {
		if !deferred(d) {
			continue
		}
		last := slices.MaxFunc(d.Attempts, func(a, b apiclient.WebhookAttempt) int { return a.At.Compare(b.At) })
		if !at.Before(last.At.Add(-time.Second)) {
			return true
		}
	}
	return false
}

func unless(bad bool, format string, args ...any) error {
	if bad {
		return fmt.Errorf(format, args...)
	}
	return nil
}

// waitSettled waits until every endpoint's deliveries are settled (see
// settled) and returns each endpoint's delivery log.
func waitSettled(t *testing.T, cl *apiclient.Client, ids map[hookKind]string, within time.Duration) map[hookKind][]apiclient.WebhookDelivery {
	t.Helper()
	deadline, report := time.Now().Add(within), time.Now().Add(30*time.Second)
	for {
		logs, waiting := map[hookKind][]apiclient.WebhookDelivery{}, []string{}
		for _, k := range hookKinds {
			logs[k] = deliveryLog(t, cl, ids[k])
			open := 0
			for _, d := range logs[k] {
				ok, err := settled(k, d)
				if err != nil {
					t.Fatalf("%s endpoint: delivery %s of event %s %v", k, d.ID, d.EventID, err)
				}
				if !ok {
					open++
				}
			}
			if open > 0 {
				// Read the others once this one settled: reading every log
				// on every round slows the deliveries it waits for.
				waiting = append(waiting, fmt.Sprintf("%s: %d of %d", k, open, len(logs[k])))
				break
			}
		}
		if len(waiting) == 0 {
			return logs
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries not settled after %v: %s", within, strings.Join(waiting, "; "))
		}
		if time.Now().After(report) {
			t.Logf("not settled yet: %s", strings.Join(waiting, "; "))
			report = time.Now().Add(30 * time.Second)
		}
		time.Sleep(time.Second)
	}
}

// deliveryLog reads an endpoint's whole delivery log.
func deliveryLog(t *testing.T, cl *apiclient.Client, id string) []apiclient.WebhookDelivery {
	t.Helper()
	var out []apiclient.WebhookDelivery
	for cursor := ""; ; {
		var page apiclient.WebhookDeliveryList
		err := cl.Do(context.Background(), "GET", "/v1/tenants/acme/webhooks/"+id+"/deliveries?limit=200&cursor="+cursor, nil, &page)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page.Deliveries...)
		if cursor = page.NextCursor; cursor == "" {
			return out
		}
	}
}

// checkRetryAfter checks that every attempt after a 429 waited for its
// Retry-After, far longer than the schedule's own step (5 s): less a
// second for the time between the answer and the log's row.
func checkRetryAfter(t *testing.T, ds []apiclient.WebhookDelivery) {
	t.Helper()
	pairs := 0
	for _, d := range ds {
		attempts := slices.Clone(d.Attempts)
		slices.SortFunc(attempts, func(a, b apiclient.WebhookAttempt) int { return a.At.Compare(b.At) })
		for i := 1; i < len(attempts); i++ {
			a, b := attempts[i-1], attempts[i]
			if a.Status != http.StatusTooManyRequests {
				continue
			}
			pairs++
			if gap := b.At.Sub(a.At); gap < (throttleSeconds-1)*time.Second {
				t.Errorf("delivery %s: attempt %d came %v after a 429 with Retry-After: %d", d.ID, b.Number, gap, throttleSeconds)
			}
		}
	}
	if pairs == 0 && len(ds) > 0 {
		t.Errorf("no delivery to the throttled endpoint logged a 429 and the attempt after it")
	}
}

// checkEndpoints checks what became of the endpoints themselves: only
// the 410 one is disabled, saying why; the failing ones are enabled, with
// their failing streak recorded; the others have none, but the throttled
// one since the 429 of a delivery a kill deferred, when that came last.
func checkEndpoints(t *testing.T, cl *apiclient.Client, ids map[hookKind]string, logs map[hookKind][]apiclient.WebhookDelivery) {
	t.Helper()
	for _, k := range hookKinds {
		h, err := cl.GetWebhook(context.Background(), "acme", ids[k])
		if err != nil {
			t.Fatal(err)
		}
		switch k {
		case hookGone:
			if h.Enabled || !strings.Contains(h.DisabledReason, "410") {
				t.Errorf("the 410 endpoint: enabled %v, reason %q", h.Enabled, h.DisabledReason)
			}
		case hookFailing, hookHanging:
			if !h.Enabled || h.FailingSince == nil {
				t.Errorf("the %s endpoint: enabled %v, failing since %v; the schedule is not spent", k, h.Enabled, h.FailingSince)
			}
		default:
			if !h.Enabled || (h.FailingSince != nil && !sinceDeferred(*h.FailingSince, logs[k])) {
				t.Errorf("the %s endpoint: enabled %v (%s), failing since %v", k, h.Enabled, h.DisabledReason, h.FailingSince)
			}
		}
	}
}
