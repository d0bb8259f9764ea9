package dialog

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/redislimit"
	"github.com/parleyhq/parley/pkg/store"
)

// Quotas is the rate limits and daily token quotas a message must pass: reach it with Runtime.Quotas().
type Quotas struct{ rt *Runtime }

// Quotas returns the rate limits and daily token quotas a message must pass.
func (r *Runtime) Quotas() Quotas { return Quotas{r} }

// Limits bound how fast and how much tenants use the model. Zero values
// mean unlimited.
type Limits struct {
	// TenantRate is message requests per second per tenant, with bursts of
	// TenantBurst (default 1 when a rate is set).
	TenantRate  float64
	TenantBurst int
	// KeyRate and KeyBurst do the same per API key.
	KeyRate  float64
	KeyBurst int
	// DailyTokens caps a tenant's input plus output tokens per UTC day.
	DailyTokens int64
	// TenantStreams caps the replies a tenant's dialogs generate at once.
	TenantStreams int
	// MaxTracked bounds how many tenants or keys each limiter remembers;
	// default 10000. The least recently seen is forgotten first, which at
	// worst grants a forgotten caller a fresh burst.
	MaxTracked int
}

// limiter holds the per-tenant and per-key token buckets and the
// tenants' streams of this process.
type limiter struct {
	tenants, keys *keyedLimiter
	daily         int64
	streams       *streamCounter
}

func newLimiter(l Limits) *limiter {
	if l.MaxTracked <= 0 {
		l.MaxTracked = 10000
	}
	tenants := newKeyedLimiter(l.TenantRate, l.TenantBurst, l.MaxTracked)
	if tenants == nil {
		// A tenant's plan may set a rate where the server sets none.
		tenants = &keyedLimiter{max: l.MaxTracked, buckets: map[string]*bucket{}}
	}
	return &limiter{
		tenants: tenants,
		keys:    newKeyedLimiter(l.KeyRate, l.KeyBurst, l.MaxTracked),
		daily:   l.DailyTokens,
		streams: &streamCounter{max: l.TenantStreams, running: map[string]int{}},
	}
}

// streamCounter counts each tenant's replies running in this process.
type streamCounter struct {
	max     int
	mu      sync.Mutex
	running map[string]int
}

// take starts one of the tenant's streams, or says false when max are
// running; release ends it.
func (s *streamCounter) take(tenantID string) (release func(), ok bool) {
	if s.max <= 0 {
		return func() {}, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running[tenantID] >= s.max {
		return nil, false
	}
	s.running[tenantID]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.running[tenantID]--; s.running[tenantID] <= 0 {
				delete(s.running, tenantID)
			}
		})
	}, true
}

// keyedLimiter is a bounded map of token buckets.
type keyedLimiter struct {
	limit rate.Limit
	burst int
	max   int

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

func newKeyedLimiter(perSecond float64, burst, max int) *keyedLimiter {
	if perSecond <= 0 {
		return nil
	}
	if burst <= 0 {
		burst = 1
	}
	return &keyedLimiter{limit: rate.Limit(perSecond), burst: burst, max: max, buckets: map[string]*bucket{}}
}

// wait takes a token for key at now, or says how long until one is free.
func (k *keyedLimiter) wait(key string, now time.Time) time.Duration {
	w, _ := k.take(key, now)
	return w
}

// take is wait that can be undone: when a token was taken, giveBack puts
// it back, for a request another limit refuses after this one let it pass.
func (k *keyedLimiter) take(key string, now time.Time) (wait time.Duration, giveBack func()) {
	if k == nil {
		return 0, func() {}
	}
	return k.takeWith(key, now, k.limit, k.burst)
}

// takeWith is take at this key's own rate and burst (a tenant's plan); a
// rate of 0 is unlimited. A bucket whose rate changed keeps its tokens and
// refills at the new rate.
func (k *keyedLimiter) takeWith(key string, now time.Time, limit rate.Limit, burst int) (wait time.Duration, giveBack func()) {
	if k == nil || key == "" || limit <= 0 {
		return 0, func() {}
	}
	if burst <= 0 {
		burst = max(1, int(math.Ceil(float64(limit))))
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	b := k.buckets[key]
	if b == nil {
		if len(k.buckets) >= k.max {
			k.evictOldest()
		}
		b = &bucket{lim: rate.NewLimiter(limit, burst)}
		k.buckets[key] = b
	}
	if b.lim.Limit() != limit || b.lim.Burst() != burst {
		b.lim.SetLimitAt(now, limit)
		b.lim.SetBurstAt(now, burst)
	}
	b.seen = now
	res := b.lim.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, nil
	}
	return 0, func() { res.CancelAt(now) } // rate.Limiter locks itself
}

// evictOldest forgets the least recently seen bucket. A linear scan, only
// when the map is full: cheaper overall than keeping an LRU list in step
// on every request.
func (k *keyedLimiter) evictOldest() {
	var oldest string
	var at time.Time
	for key, b := range k.buckets {
		if oldest == "" || b.seen.Before(at) {
			oldest, at = key, b.seen
		}
	}
	delete(k.buckets, oldest)
}

// retryAfter is the cause of a rate_limited Error: how long to wait, and
// whether the wait is for the daily token quota to renew.
type retryAfter struct {
	wait  time.Duration
	quota bool
}

func (r retryAfter) Error() string { return fmt.Sprintf("retry after %s", r.wait) }

func rateLimited(wait time.Duration, format string, args ...any) *platform.Error {
	return platform.Wrap(retryAfter{wait: wait}, platform.CodeRateLimited, format, args...)
}

// busyRetry is how long a caller refused because a dialog is answering
// is asked to wait: a reply takes seconds, and a retry that comes too
// soon is only refused again.
const busyRetry = time.Second

// busy is the conflict of a dialog that is answering: it ends by itself,
// so the caller is told when to retry (RetryAfter).
func busy(format string, args ...any) *platform.Error {
	return platform.Wrap(retryAfter{wait: busyRetry}, platform.CodeConflict, format, args...)
}

// RetryAfter returns how long a rate_limited error, or the conflict of a
// busy dialog, asks the caller to wait (at least a second), and 0 for any
// other error.
func RetryAfter(err error) time.Duration {
	var ra retryAfter
	if !errors.As(err, &ra) {
		return 0
	}
	return max(time.Second, time.Duration(math.Ceil(ra.wait.Seconds()))*time.Second)
}

// QuotaReached reports whether err refuses a request because the tenant
// used its daily token quota: unlike a rate limit, no retry passes before
// the quota renews, so a client that retries by itself should not.
func QuotaReached(err error) bool {
	var ra retryAfter
	return errors.As(err, &ra) && ra.quota
}

// admit applies the rate limits, the concurrent-stream limit and the
// daily token quota to one request that will call the model: in Redis
// when the runtime shares its limits (Options.Shared) and Redis answers,
// else in this process. release ends the request's stream; call it when
// the reply is done.
func (q Quotas) admit(ctx context.Context, p *platform.Principal, tenantID string) (release func(), err error) {
	r := q.rt
	now := r.now()
	if sh := r.opts.Shared; sh != nil {
		release, err := r.Quotas().admitShared(ctx, sh, p, tenantID, now)
		if !errors.Is(err, redislimit.ErrUnavailable) {
			return release, err
		}
		if r.opts.SharedFailClosed {
			return nil, platform.Wrap(retryAfter{wait: time.Second}, platform.CodeUnavailable,
				"the shared rate limits cannot be checked right now; retry in a moment")
		}
	}
	return r.Quotas().admitLocal(ctx, p, tenantID, now)
}

// tenantRate is the tenant's message rate: its plan's, or the server's.
func (q Quotas) tenantRate(plan platform.TenantLimits) (rate.Limit, int) {
	r := q.rt
	limit, burst := r.limits.tenants.limit, r.limits.tenants.burst
	if plan.RatePerSecond != nil {
		limit, burst = rate.Limit(*plan.RatePerSecond), 0
		if plan.RateBurst != nil {
			burst = *plan.RateBurst
		}
	}
	if limit > 0 && burst <= 0 {
		burst = max(1, int(math.Ceil(float64(limit))))
	}
	return limit, burst
}

// admitLocal is admit counted by this process alone.
func (q Quotas) admitLocal(ctx context.Context, p *platform.Principal, tenantID string, now time.Time) (func(), error) {
	r := q.rt
	// The key's own limit is asked first, and its token given back when
	// the tenant's refuses: a key over its limit must not spend the
	// tenant's budget, or one runaway widget key starves every other key
	// of its tenant.
	wait, giveBack := r.limits.keys.take(p.KeyID, now)
	if wait > 0 {
		return nil, keyTooFast(wait)
	}
	plan, err := r.planOf(ctx, tenantID, now)
	if err != nil {
		giveBack()
		return nil, err
	}
	limit, burst := r.Quotas().tenantRate(plan)
	if wait, _ := r.limits.tenants.takeWith(tenantID, now, limit, burst); wait > 0 {
		giveBack()
		return nil, tenantTooFast(wait)
	}
	over, err := r.Quotas().overQuota(ctx, tenantID, now)
	if err != nil {
		return nil, err
	}
	if over {
		return nil, quotaUsed(now)
	}
	release, ok := r.limits.streams.take(tenantID)
	if !ok {
		return nil, tooManyStreams(busyRetry)
	}
	return release, nil
}

func keyTooFast(wait time.Duration) error {
	return rateLimited(wait, "this API key sends messages too fast; retry in a moment")
}

func tenantTooFast(wait time.Duration) error {
	return rateLimited(wait, "this tenant sends messages too fast; retry in a moment")
}

func tooManyStreams(wait time.Duration) error {
	return rateLimited(wait, "this tenant has as many replies being generated as it may at once; retry when one is done")
}

func quotaUsed(now time.Time) error {
	return platform.Wrap(retryAfter{wait: untilTomorrow(now), quota: true}, platform.CodeRateLimited,
		"this tenant used its daily token quota; it renews at midnight UTC")
}

// overQuota reports whether the tenant has used its daily tokens: its
// plan's quota, or the server's.
func (q Quotas) overQuota(ctx context.Context, tenantID string, now time.Time) (bool, error) {
	r := q.rt
	daily, err := r.Quotas().dailyQuota(ctx, tenantID, now)
	if err != nil || daily <= 0 {
		return false, err
	}
	used, err := r.Quotas().usedToday(ctx, tenantID, now)
	if err != nil || used < daily {
		return false, err
	}
	r.svc.Webhooks().QuotaReached(ctx, tenantID, now.UTC().Format(store.DayFormat), daily, used, now.UTC().Add(untilTomorrow(now)))
	return true, nil
}

// dailyQuota is the tenant's daily token quota: its plan's, or the
// server's; 0 is unlimited.
func (q Quotas) dailyQuota(ctx context.Context, tenantID string, now time.Time) (int64, error) {
	r := q.rt
	plan, err := r.planOf(ctx, tenantID, now)
	if err != nil {
		return 0, err
	}
	if plan.DailyTokenQuota != nil {
		return *plan.DailyTokenQuota, nil
	}
	return r.limits.daily, nil
}

// usedToday is the tenant's tokens of the UTC day, with what this process
// has metered and not written yet.
func (q Quotas) usedToday(ctx context.Context, tenantID string, now time.Time) (int64, error) {
	r := q.rt
	day := now.UTC().Format(store.DayFormat)
	if sh := r.opts.Shared; sh != nil {
		if used, ok := sh.Used(tenantID, day, now); ok {
			return used, nil // every server's tokens, as Redis last answered
		}
	}
	used, err := r.store.Tenant(tenantID).Usage().DayTokens(ctx, day)
	if err != nil {
		return 0, r.internal(ctx, "daily quota", err)
	}
	return used + r.meter.pendingTokens(tenantID, day), nil
}

// quotaBot is the bot as this run asks the model: downgraded to its
// llm.quota_downgrade model once the tenant has used that share of its
// daily quota (its plan's, or the server's).
func (q Quotas) quotaBot(ctx context.Context, tenantID string, bot *botconfig.Bot) (*botconfig.Bot, error) {
	r := q.rt
	d := bot.LLM.QuotaDowngrade
	if d == nil {
		return bot, nil
	}
	now := r.now()
	daily, err := r.Quotas().dailyQuota(ctx, tenantID, now)
	if err != nil || daily <= 0 {
		return bot, err
	}
	used, err := r.Quotas().usedToday(ctx, tenantID, now)
	if err != nil {
		return bot, err
	}
	if float64(used) >= d.At*float64(daily) {
		return bot.Downgraded(), nil
	}
	return bot, nil
}

func untilTomorrow(now time.Time) time.Duration {
	now = now.UTC()
	return time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC).Sub(now)
}
