package platform_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/longtest"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
	"github.com/parleyhq/parley/pkg/webhook"
)

// webhookEventsEnv scales the delivery tests: 40 events in make test,
// 1,000 in a long run (make test-long), e.g. 10000 when set.
const webhookEventsEnv = "PARLEY_TEST_WEBHOOK_EVENTS"

func webhookEvents(t *testing.T) int {
	if v := os.Getenv(webhookEventsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q is not a positive number", webhookEventsEnv, v)
		}
		return n
	}
	return longtest.Pick(40, 1000)
}

// testClock is the deliverers' clock in the delivery tests: the wall
// clock, which the test moves ahead when the deliverers are idle and the
// next delivery is due later (a retry a 429 put off for a second), so the
// test does not wait for it.
type testClock struct{ ahead atomic.Int64 }

func (c *testClock) Now() time.Time { return time.Now().Add(time.Duration(c.ahead.Load())) }

func (c *testClock) advance(d time.Duration) { c.ahead.Add(int64(d)) }

// receiver is a tenant's webhook endpoint with a behaviour. It verifies
// every signature and counts, per webhook-id, the attempts and the 2xx
// answers it gave.
type receiver struct {
	name string
	// answer decides the reply to the nth attempt (1-based) of message id
	// k (the message's ordinal in the test); 0 means hang until the
	// client gives up.
	answer  func(k, attempt int) int
	healthy bool
	srv     *httptest.Server
	key     []byte
	clock   *testClock // the deliverer's, on which gaps are measured

	mu       sync.Mutex
	attempts map[string]int
	accepted map[string]int
	last     map[string]time.Time
	gaps     map[string]time.Duration // between the 1st and 2nd attempt
	ordinal  map[string]int
	bad      atomic.Int64 // requests whose signature did not verify
}

func newReceiver(t *testing.T, clock *testClock, name string, healthy bool, answer func(k, attempt int) int) *receiver {
	r := &receiver{name: name, answer: answer, healthy: healthy, clock: clock, attempts: map[string]int{}, accepted: map[string]int{},
		last: map[string]time.Time{}, gaps: map[string]time.Duration{}, ordinal: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body := make([]byte, 0, 512)
	buf := make([]byte, 4096)
	for {
		n, err := req.Body.Read(buf)
		body = append(body, buf[:n]...)
		if err != nil {
			break
		}
	}
	if err := webhook.Verify(r.key, req.Header, body, r.clock.Now()); err != nil {
		r.bad.Add(1)
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	id := req.Header.Get(webhook.HeaderID)
	r.mu.Lock()
	r.attempts[id]++
	n := r.attempts[id]
	if n == 2 {
		r.gaps[id] = r.clock.Now().Sub(r.last[id])
	}
	r.last[id] = r.clock.Now()
	k, ok := r.ordinal[id]
	if !ok {
		k = len(r.ordinal)
		r.ordinal[id] = k
	}
	r.mu.Unlock()
	status := r.answer(k, n)
	switch {
	case status == 0:
		<-req.Context().Done() // the deliverer's timeout
		return
	case status == http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(status)
	fmt.Fprintf(w, "answer %d", status)
	w.(http.Flusher).Flush()
	// An answer the deliverer gave up waiting for (a stalled machine can
	// make a quick one late) is a failed attempt to both sides, so it is
	// retried: it does not count as taken.
	if status >= 200 && status < 300 && req.Context().Err() == nil {
		r.mu.Lock()
		r.accepted[id]++
		r.mu.Unlock()
	}
}

// receivers are the endpoints of the delivery tests: four that end up
// taking every event (after failures, timeouts and 429s), and one that
// answers 410.
func receivers(t *testing.T, clock *testClock) []*receiver {
	every := func(n int) func(k int) bool { return func(k int) bool { return k%n == 0 } }
	tenth := every(10)
	return []*receiver{
		newReceiver(t, clock, "healthy", true, func(int, int) int { return http.StatusNoContent }),
		newReceiver(t, clock, "failing first", true, func(k, a int) int {
			if a == 1 {
				return http.StatusInternalServerError
			}
			return http.StatusOK
		}),
		newReceiver(t, clock, "slow", true, func(k, a int) int {
			if a == 1 && tenth(k) {
				return 0
			}
			return http.StatusAccepted
		}),
		newReceiver(t, clock, "rate limited", true, func(k, a int) int {
			if a == 1 && tenth(k+5) {
				return http.StatusTooManyRequests
			}
			return http.StatusOK
		}),
		newReceiver(t, clock, "gone", false, func(int, int) int { return http.StatusGone }),
	}
}

// testPolicy lets the deliverer reach the receivers on loopback.
func testPolicy(t *testing.T, rs []*receiver) outbound.Policy {
	p := outbound.Policy{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	for _, r := range rs {
		u, _ := url.Parse(r.srv.URL)
		port, _ := strconv.Atoi(u.Port())
		p.ExtraPorts = append(p.ExtraPorts, port)
	}
	return p
}

// hookWorld is a tenant with one bot, an endpoint per receiver subscribed
// to bot.version_published, and two endpoints that must get nothing: one
// subscribed to another type, one filtered to another bot.
type hookWorld struct {
	tenant, bot string
	rs          []*receiver
	policy      outbound.Policy
	quiet       *receiver
	clock       *testClock
}

func newHookWorld(t *testing.T, svc *platform.Service) *hookWorld {
	op := platform.Operator()
	clock := &testClock{}
	w := &hookWorld{tenant: "hooks", bot: "support", rs: receivers(t, clock), clock: clock}
	if _, _, err := svc.Tenants().Create(ctx, op, platform.CreateTenantInput{Slug: w.tenant, Name: "Hooks"}); err != nil {
		t.Fatal(err)
	}
	for _, slug := range []string{w.bot, "other"} {
		if _, _, err := svc.Bots().Create(ctx, op, w.tenant, slug, []byte(configV1)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := svc.Versions().Create(ctx, op, w.tenant, slug, []byte(configV2)); err != nil {
			t.Fatal(err)
		}
	}
	w.quiet = newReceiver(t, clock, "quiet", false, func(int, int) int { return http.StatusOK })
	w.policy = testPolicy(t, append(w.rs, w.quiet))
	subscribe := func(r *receiver, in platform.WebhookInput) {
		in.URL = r.srv.URL + "/hook"
		h, err := svc.Webhooks().Create(ctx, op, w.tenant, in)
		if err != nil {
			t.Fatal(err)
		}
		if r.key, err = webhook.SecretKey(h.Secret); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range w.rs {
		subscribe(r, platform.WebhookInput{Events: []string{webhook.BotVersionPublished}, Bot: w.bot})
	}
	subscribe(w.quiet, platform.WebhookInput{Events: []string{webhook.DialogCreated}})
	subscribe(w.quiet, platform.WebhookInput{Events: []string{"*"}, Bot: "other"})
	return w
}

// publish makes n facts that each emit bot.version_published: the bot's
// two versions published in turn.
func (w *hookWorld) publish(t *testing.T, svc *platform.Service, n int) {
	for i := range n {
		if _, err := svc.Versions().Publish(ctx, platform.Operator(), w.tenant, w.bot, 1+i%2); err != nil {
			t.Errorf("publish %d: %v", i, err)
			return
		}
	}
}

// testSchedule is the standard schedule's shape, shrunk to milliseconds.
var testSchedule = []time.Duration{0, 10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 400 * time.Millisecond,
	500 * time.Millisecond, 600 * time.Millisecond}

// newTestDeliverer is a deliverer on the shrunk schedule. Its lease is long
// beside the attempt's timeout, as in production (60 s beside 15 s): a
// claim that lapsed before its attempt was written, on a busy shared
// machine, would send the event twice.
func newTestDeliverer(t *testing.T, svc *platform.Service, w *hookWorld, owns bool) *platform.Deliverer {
	d, err := svc.Webhooks().NewDeliverer(platform.DelivererOptions{
		Client:   outbound.NewClient(w.policy, outbound.Options{MaxRedirects: -1}),
		Schedule: testSchedule, Timeout: 300 * time.Millisecond, Lease: 10 * time.Second,
		Poll: 50 * time.Millisecond, OwnsDatabase: owns, Now: w.clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// run starts svc's deliverer and subscription watcher; the returned func
// stops them as a crash would (attempts in flight are abandoned, not
// recorded) and waits.
func run(svc *platform.Service, d *platform.Deliverer) (stop func()) {
	c, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); svc.Webhooks().Watch(c) }()
	go func() { defer wg.Done(); d.Run(c) }()
	return func() { cancel(); wg.Wait() }
}

// waitSettled waits until no delivery is pending. When none is claimed
// and the next is due later, it moves the clock to then: no lease runs
// that the move could cut short.
func (w *hookWorld) waitSettled(t *testing.T, st *store.Store, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var pending []struct {
			Claim         string
			NextAttemptAt time.Time
		}
		if err := st.DB().Raw("SELECT claim, next_attempt_at FROM webhook_deliveries WHERE status = 'pending'").Scan(&pending).Error; err != nil {
			t.Fatal(err)
		}
		if len(pending) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries still pending after %v", len(pending), within)
		}
		next, idle := pending[0].NextAttemptAt, true
		for _, p := range pending {
			idle = idle && p.Claim == ""
			if p.NextAttemptAt.Before(next) {
				next = p.NextAttemptAt
			}
		}
		if wait := next.Sub(w.clock.Now()); idle && wait > 0 {
			w.clock.advance(wait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// accepted counts how many events healthy took at least once.
func (r *receiver) acceptedIDs() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.accepted)
}

// check asserts what every test ends with: each event taken by every
// healthy receiver, more than once only within allowDup (in-flight
// attempts a crash abandoned), and after a 429 no sooner than its
// Retry-After but for as many, the 410 endpoint disabled after its first
// answers, nothing for the quiet endpoints, and every signature valid.
func (w *hookWorld) check(t *testing.T, svc *platform.Service, n, allowDup int) {
	t.Helper()
	for _, r := range append(w.rs, w.quiet) {
		r.mu.Lock()
		dups := 0
		for _, c := range r.accepted {
			dups += c - 1
		}
		attempts := 0
		for _, c := range r.attempts {
			attempts += c
		}
		took, seen := len(r.accepted), len(r.attempts)
		var short []string
		for id, gap := range r.gaps {
			if r.answer(r.ordinal[id], 1) == http.StatusTooManyRequests && gap < time.Second {
				short = append(short, id)
			}
		}
		r.mu.Unlock()
		t.Logf("%-13s events taken %5d, attempts %5d, duplicates %d", r.name, took, attempts, dups)
		if bad := r.bad.Load(); bad > 0 {
			t.Errorf("%s: %d requests had no valid signature", r.name, bad)
		}
		switch {
		case r == w.quiet:
			if seen != 0 {
				t.Errorf("quiet endpoints got %d events they do not subscribe to", seen)
			}
		case r.healthy:
			if took != n {
				t.Errorf("%s took %d of %d events", r.name, took, n)
			}
			if dups > allowDup {
				t.Errorf("%s took %d events more than once, want at most %d", r.name, dups, allowDup)
			}
			// A 429 the receiver gave to an attempt a crash abandoned was
			// never recorded, so its retry is due at once: at most the
			// attempts in flight, as for duplicates.
			if len(short) > allowDup {
				t.Errorf("%s: %d retries came sooner than the 1 s its Retry-After asked, want at most %d", r.name, len(short), allowDup)
			}
		default: // gone
			if seen == n {
				t.Errorf("the endpoint that answered 410 was sent every event; it should have been disabled")
			}
		}
	}
	hooks, err := svc.Webhooks().List(ctx, platform.Operator(), w.tenant)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hooks {
		gone := h.URL == w.rs[len(w.rs)-1].srv.URL+"/hook"
		if h.Enabled == gone {
			t.Errorf("endpoint %s: enabled %v (%s), want %v", h.URL, h.Enabled, h.DisabledReason, !gone)
		}
		if gone && h.DisabledReason == "" {
			t.Errorf("the disabled endpoint does not say why")
		}
	}
}

// TestEveryEventReachesEveryHealthyEndpointOnce publishes events while
// the deliverer runs, against receivers that fail, time out, answer 429
// or 410.
func TestEveryEventReachesEveryHealthyEndpointOnce(t *testing.T) {
	t.Parallel()
	n := webhookEvents(t)
	forEachBackend(t, func(t *testing.T, e *env) {
		w := newHookWorld(t, e.svc)
		stop := run(e.svc, newTestDeliverer(t, e.svc, w, false))
		defer stop()
		w.publish(t, e.svc, n)
		w.waitSettled(t, e.store, time.Duration(n)*50*time.Millisecond+time.Minute)
		stop()
		w.check(t, e.svc, n, 0)
	})
}

// waitTaken waits until the healthy receiver took at least n events.
func (w *hookWorld) waitTaken(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for w.rs[0].acceptedIDs() < n {
		if time.Now().After(deadline) {
			t.Fatalf("the healthy receiver took only %d events of the %d awaited", w.rs[0].acceptedIDs(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func newService(t *testing.T, st *store.Store) *platform.Service {
	t.Helper()
	return platformtest.New(t, st, platform.Options{Sealer: mustSealer(t), PlatformToken: platformToken})
}

// TestTwoPostgresInstancesDeliverEachEventOnceAndOneMayCrash runs two
// server processes' deliverers on one PostgreSQL database, both writing
// events, and crashes one midway: the other takes over what it held once
// the claims lapse, which the test makes happen at once.
func TestTwoPostgresInstancesDeliverEachEventOnceAndOneMayCrash(t *testing.T) {
	t.Parallel()
	u := os.Getenv(storetest.EnvDatabaseURL)
	if u == "" {
		t.Skip("PARLEY_TEST_DATABASE_URL is not set: skipping the two-instance PostgreSQL test")
	}
	n := webhookEvents(t)
	stA, stB := storetest.OpenPostgresTwice(t, u)
	a, b := newService(t, stA), newService(t, stB)
	w := newHookWorld(t, a)
	stopA := run(a, newTestDeliverer(t, a, w, false))
	stopB := run(b, newTestDeliverer(t, b, w, false))
	defer stopB()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); w.publish(t, a, n/2) }()
	go func() { defer wg.Done(); w.publish(t, b, n-n/2) }()
	w.waitTaken(t, n/3)
	stopA() // the crash: A's attempts in flight are abandoned
	wg.Wait()
	// A's claims lapse after the lease (10 s); the test lets that time
	// pass by moving their end to now. B's own claims in flight are moved
	// too, and B skips those as in flight.
	if err := stB.DB().Exec(`UPDATE webhook_deliveries SET next_attempt_at = ? WHERE status = 'pending' AND claim <> ''`,
		w.clock.Now().UTC()).Error; err != nil {
		t.Fatal(err)
	}
	w.waitSettled(t, stB, time.Duration(n)*50*time.Millisecond+time.Minute)
	stopB()
	w.check(t, b, n, 16) // at most the attempts A had in flight
}

// TestSQLiteServerRestartsMidDelivery writes every event, crashes the
// server midway and starts it again on the same data dir: what was in
// flight is due again at once, and nothing is lost.
func TestSQLiteServerRestartsMidDelivery(t *testing.T) {
	t.Parallel()
	n := webhookEvents(t)
	dir := t.TempDir()
	open := func() *store.Store {
		st, err := store.Open(ctx, store.Config{DataDir: dir, Server: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open()
	svc := newService(t, st)
	w := newHookWorld(t, svc)
	w.publish(t, svc, n)
	stop := run(svc, newTestDeliverer(t, svc, w, true))
	w.waitTaken(t, n/3)
	stop()
	st.Close()

	st = open()
	defer st.Close()
	svc = newService(t, st)
	stop = run(svc, newTestDeliverer(t, svc, w, true))
	defer stop()
	w.waitSettled(t, st, time.Duration(n)*50*time.Millisecond+time.Minute)
	stop()
	w.check(t, svc, n, 16)
}
