package redislimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// ErrUnavailable is Admit's answer while Redis does not answer.
var ErrUnavailable = errors.New("redislimit: redis is unavailable")

// Defaults of Options.
const (
	defaultFlushEvery = 100 * time.Millisecond
	defaultStreamTTL  = 30 * time.Second
	defaultProbeEvery = time.Second
	// timeout bounds every call: a Redis that stops answering costs a
	// request this much once, then the limiter counts it down and the
	// probe finds when it is back.
	timeout = 500 * time.Millisecond
)

// Options tune a Limiter; the zero value works.
type Options struct {
	// Prefix starts every key; default "parley:".
	Prefix string
	// FlushEvery is how often used tokens, ended streams and lease
	// renewals are written; default 100ms. Other servers see a tenant's
	// tokens at most this late.
	FlushEvery time.Duration
	// StreamTTL is how long a stream's lease lasts without renewal
	// (renewed every third of it while it runs); default 30s. A dead
	// server's streams are free after it.
	StreamTTL time.Duration
	// Clock is the time of renewals (time.Now); Admit takes its own.
	Clock func() time.Time
	// Logger receives the transitions between up and down.
	Logger *slog.Logger
	// Metrics receives parley_redis_up; nil keeps it unexported.
	Metrics prometheus.Registerer
	// Hook, when set, sees every command of every client the limiter
	// makes: how a benchmark counts the round trips a message costs.
	Hook redis.Hook
}

// Rate is a number of requests per second with bursts of Burst; a
// PerSecond of 0 is no limit.
type Rate struct {
	PerSecond float64
	Burst     int
}

// interval is the GCRA emission interval in milliseconds, 0 for no limit.
func (r Rate) interval() (ms float64, burst int) {
	if r.PerSecond <= 0 {
		return 0, 0
	}
	return 1000 / r.PerSecond, max(1, r.Burst)
}

// Request is one request to admit.
type Request struct {
	Now    time.Time
	Tenant string
	// Key is the API key's id ("" for none), limited to KeyRate.
	Key        string
	KeyRate    Rate
	TenantRate Rate
	// MaxStreams bounds the tenant's concurrent streams; 0 is no limit.
	MaxStreams int
	// Stream names this request's stream when MaxStreams is set; unique.
	Stream string
	// Day is the UTC day (2006-01-02) whose tokens Quota bounds; a Quota
	// of 0 is no limit.
	Day   string
	Quota int64
}

// Refusal says which limit refused a request.
type Refusal int

// The refusals of Decision.
const (
	Passed Refusal = iota
	KeyRate
	TenantRate
	QuotaUsed
	StreamsBusy
	// Unseeded: Redis does not hold the day's tokens; Seed them from the
	// database and ask again.
	Unseeded
)

// Decision is Admit's answer.
type Decision struct {
	Refused Refusal
	// RetryAfter is when a rate or stream refusal may pass.
	RetryAfter time.Duration
	// Used is the tenant's tokens of the day when the request had a
	// quota, with what this process has not written yet.
	Used int64
}

// Limiter counts limits in Redis for every server sharing it. It is safe
// for concurrent use.
type Limiter struct {
	// client is replaced by a fresh one when Redis comes back, so no
	// request meets a connection of the Redis that went away.
	client  atomic.Pointer[redis.Client]
	options *redis.Options
	opts    Options
	log     *slog.Logger
	up      atomic.Bool
	// probed says Redis was asked once, so a Redis missing at start is
	// logged too.
	probed atomic.Bool
	gauge  prometheus.Gauge

	mu sync.Mutex
	// tokens are tokens used and not written yet, by counter key.
	tokens map[string]int64
	// known is each counter as Redis last answered, without tokens.
	known map[string]known
	// streams are this process's running streams, by streams key and id,
	// renewed while they run; ended are those to remove.
	streams map[string]map[string]struct{}
	ended   map[string][]string
	renewed time.Time
}

type known struct {
	value   int64
	expires time.Time
}

// Open returns a Limiter for the Redis at url (redis://[user:password@]host:port[/db],
// or rediss:// for TLS). It does not connect: Run finds Redis, and
// until it answers, Admit returns ErrUnavailable.
func Open(url string, opts Options) (*Limiter, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		// The URL may hold a password: say what is wrong, not what it was.
		return nil, errors.New("not a Redis URL like redis://host:6379/0 or rediss://user:password@host:6380")
	}
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = timeout, timeout, timeout
	o.MaxRetries = -1 // a failed call falls back at once; the probe retries
	o.DialerRetries = 1
	if opts.Prefix == "" {
		opts.Prefix = "parley:"
	}
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = defaultFlushEvery
	}
	if opts.StreamTTL <= 0 {
		opts.StreamTTL = defaultStreamTTL
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	l := &Limiter{options: o, opts: opts, log: opts.Logger,
		tokens: map[string]int64{}, known: map[string]known{}, streams: map[string]map[string]struct{}{}, ended: map[string][]string{},
		gauge: prometheus.NewGauge(prometheus.GaugeOpts{Name: "parley_redis_up",
			Help: "1 while Redis (PARLEY_REDIS_URL) answers and limits are shared by every server; 0 while each server counts its own."})}
	l.client.Store(l.newClient())
	if opts.Metrics != nil {
		if err := opts.Metrics.Register(l.gauge); err != nil {
			return nil, fmt.Errorf("redislimit: register metrics: %w", err)
		}
	}
	return l, nil
}

// newClient is a client of the limiter's Redis, with its Hook.
func (l *Limiter) newClient() *redis.Client {
	c := redis.NewClient(l.options)
	if l.opts.Hook != nil {
		c.AddHook(l.opts.Hook)
	}
	return c
}

// Up reports whether Redis answered last time it was asked.
func (l *Limiter) Up() bool { return l.up.Load() }

// Close closes the connections; call it after Run has returned.
func (l *Limiter) Close() error { return l.client.Load().Close() }

// Keys. Each names its tenant in braces, a Redis Cluster hash tag, so one
// request's keys share a slot and one script may touch them all.
func (l *Limiter) rateKey(tenant, key string) string {
	return l.opts.Prefix + "rate:{" + tenant + "}:key:" + key
}
func (l *Limiter) tenantRateKey(tenant string) string { return l.opts.Prefix + "rate:{" + tenant + "}" }
func (l *Limiter) streamsKey(tenant string) string    { return l.opts.Prefix + "streams:{" + tenant + "}" }
func (l *Limiter) tokensKey(tenant, day string) string {
	return l.opts.Prefix + "tokens:{" + tenant + "}:" + day
}

// Admit decides a request in one round trip, and records it when it
// passes: its rates are spent, its stream is leased (free it with
// Release). It returns ErrUnavailable, at once while Redis is known to be
// down, when Redis does not answer.
func (l *Limiter) Admit(ctx context.Context, q Request) (Decision, error) {
	if !l.up.Load() {
		return Decision{}, ErrUnavailable
	}
	keyInterval, keyBurst := q.KeyRate.interval()
	if q.Key == "" {
		keyInterval, keyBurst = 0, 0
	}
	tenantInterval, tenantBurst := q.TenantRate.interval()
	counter, streams := l.tokensKey(q.Tenant, q.Day), l.streamsKey(q.Tenant)
	l.mu.Lock()
	pending, ended := l.tokens[counter], l.ended[streams]
	delete(l.ended, streams)
	l.mu.Unlock()
	now := q.Now.UnixMilli()
	args := append([]any{now, keyInterval, keyBurst, tenantInterval, tenantBurst,
		q.MaxStreams, q.Stream, now + l.opts.StreamTTL.Milliseconds(), q.Quota, pending}, toAny(ended)...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := admitScript.Run(ctx, l.client.Load(),
		[]string{l.rateKey(q.Tenant, q.Key), l.tenantRateKey(q.Tenant), streams, counter}, args...).Int64Slice()
	if err != nil {
		if len(ended) > 0 {
			l.mu.Lock()
			l.ended[streams] = append(l.ended[streams], ended...)
			l.mu.Unlock()
		}
		l.failed(err)
		return Decision{}, ErrUnavailable
	}
	if len(res) != 3 {
		l.failed(fmt.Errorf("admit script answered %v", res))
		return Decision{}, ErrUnavailable
	}
	d := Decision{Refused: Refusal(res[0]), RetryAfter: time.Duration(res[1]) * time.Millisecond, Used: res[2] + pending}
	if q.Quota > 0 && d.Refused != Unseeded && d.Refused != KeyRate && d.Refused != TenantRate {
		l.remember(counter, res[2], q.Now)
	}
	if d.Refused == Passed && q.MaxStreams > 0 {
		l.mu.Lock()
		ids := l.streams[l.streamsKey(q.Tenant)]
		if ids == nil {
			ids = map[string]struct{}{}
			l.streams[l.streamsKey(q.Tenant)] = ids
		}
		ids[q.Stream] = struct{}{}
		l.mu.Unlock()
	}
	return d, nil
}

// Seed sets the tenant's tokens of day to used, read from the database
// with what this process has not written there yet, unless another
// server did first, and returns the counter. The tokens this process has
// not written to Redis are in used already, so they are dropped.
func (l *Limiter) Seed(ctx context.Context, tenant, day string, used int64, now time.Time) (int64, error) {
	if !l.up.Load() {
		return 0, ErrUnavailable
	}
	counter := l.tokensKey(tenant, day)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := seedScript.Run(ctx, l.client.Load(), []string{counter}, used, counterTTL(day, now).Milliseconds()).Int64()
	if err != nil {
		l.failed(err)
		return 0, ErrUnavailable
	}
	l.mu.Lock()
	delete(l.tokens, counter)
	l.mu.Unlock()
	l.remember(counter, v, now)
	return v, nil
}

// counterTTL keeps a day's counter an hour past the day's end, for
// servers whose clocks are a little behind.
func counterTTL(day string, now time.Time) time.Duration {
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return 25 * time.Hour
	}
	return max(time.Minute, d.Add(25*time.Hour).Sub(now))
}

// AddTokens counts tokens the tenant used on day; they are written with
// the next flush.
func (l *Limiter) AddTokens(tenant, day string, n int64) {
	if n <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tokens[l.tokensKey(tenant, day)] += n
}

// Used returns the tenant's tokens of day as Redis last answered plus
// what this process has not written yet; false when this process has no
// recent answer (ask the database instead).
func (l *Limiter) Used(tenant, day string, now time.Time) (int64, bool) {
	if !l.up.Load() {
		return 0, false
	}
	counter := l.tokensKey(tenant, day)
	l.mu.Lock()
	defer l.mu.Unlock()
	k, ok := l.known[counter]
	if !ok || now.After(k.expires) {
		return 0, false
	}
	return k.value + l.tokens[counter], true
}

// knownFor is how long a counter's last answer stands in for asking
// Redis, for Used: flushes refresh it while the tenant is busy.
const knownFor = 5 * time.Second

func (l *Limiter) remember(counter string, v int64, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.known[counter] = known{value: v, expires: now.Add(knownFor)}
}

// Release ends a stream Admit leased; the lease is removed with the next
// flush, or the tenant's next Admit on this server, whichever is first.
func (l *Limiter) Release(tenant, stream string) {
	key := l.streamsKey(tenant)
	l.mu.Lock()
	defer l.mu.Unlock()
	if ids := l.streams[key]; ids != nil {
		delete(ids, stream)
		if len(ids) == 0 {
			delete(l.streams, key)
		}
	}
	l.ended[key] = append(l.ended[key], stream)
}

// Run flushes every FlushEvery while Redis answers, and probes it every
// second while it does not, until ctx ends; then it flushes once more.
func (l *Limiter) Run(ctx context.Context) {
	l.probe(ctx)
	flush := time.NewTicker(l.opts.FlushEvery)
	defer flush.Stop()
	probe := time.NewTicker(defaultProbeEvery)
	defer probe.Stop()
	for {
		select {
		case <-ctx.Done():
			if l.up.Load() {
				l.flush(context.WithoutCancel(ctx))
			}
			return
		case <-flush.C:
			if l.up.Load() {
				l.flush(ctx)
			}
		case <-probe.C:
			if !l.up.Load() {
				l.probe(ctx)
			}
		}
	}
}

// probe pings Redis and marks it up when it answers.
func (l *Limiter) probe(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := l.client.Load()
	if l.probed.Load() {
		// Redis was down: its pooled connections are dead, and each would
		// fail one request before the pool dropped it.
		c = l.newClient()
	}
	if err := c.Ping(ctx).Err(); err != nil {
		if c != l.client.Load() {
			c.Close()
		}
		l.failed(err)
		return
	}
	if old := l.client.Swap(c); old != c {
		old.Close()
	}
	l.probed.Store(true)
	if !l.up.Swap(true) {
		l.gauge.Set(1)
		l.log.Info("redis answers: rate limits, streams and quotas are shared by every server")
	}
}

// failed marks Redis down, logging the transition once.
func (l *Limiter) failed(err error) {
	if l.up.Swap(false) || !l.probed.Swap(true) {
		l.gauge.Set(0)
		l.log.Warn("redis does not answer: each server counts rate limits, streams and quotas on its own until it does", "err", err)
	}
}

// flush writes used tokens, removes ended streams and, every third of
// StreamTTL, renews the running ones, in one pipeline. What fails to be
// written is kept for the next flush; ended streams are let expire.
func (l *Limiter) flush(ctx context.Context) {
	now := l.opts.Clock()
	l.mu.Lock()
	tokens, ended := l.tokens, l.ended
	l.tokens, l.ended = map[string]int64{}, map[string][]string{}
	var renew map[string][]string
	if now.Sub(l.renewed) >= l.opts.StreamTTL/3 && len(l.streams) > 0 {
		renew = map[string][]string{}
		for key, ids := range l.streams {
			for id := range ids {
				renew[key] = append(renew[key], id)
			}
		}
		l.renewed = now
	}
	for counter, k := range l.known {
		if now.After(k.expires) {
			delete(l.known, counter)
		}
	}
	l.mu.Unlock()
	if len(tokens) == 0 && len(ended) == 0 && len(renew) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	pipe := l.client.Load().Pipeline()
	adds := map[string]*redis.Cmd{}
	for counter, n := range tokens {
		adds[counter] = addScript.Eval(ctx, pipe, []string{counter}, n)
	}
	for key, ids := range ended {
		if len(ids) > 0 { // ZREM without members is an error that would fail the whole flush
			pipe.ZRem(ctx, key, toAny(ids)...)
		}
	}
	for key, ids := range renew {
		members := make([]redis.Z, len(ids))
		for i, id := range ids {
			members[i] = redis.Z{Score: float64(now.Add(l.opts.StreamTTL).UnixMilli()), Member: id}
		}
		pipe.ZAddXX(ctx, key, members...)
		pipe.PExpire(ctx, key, l.opts.StreamTTL)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		l.mu.Lock()
		for counter, n := range tokens {
			l.tokens[counter] += n
		}
		l.mu.Unlock()
		l.failed(err)
		return
	}
	for counter, cmd := range adds {
		if v, err := cmd.Int64(); err == nil && v >= 0 {
			l.remember(counter, v, now)
		}
	}
}

func toAny(ids []string) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}
