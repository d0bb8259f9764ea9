package dialog

import (
	"context"
	"time"

	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/redislimit"
	"github.com/parleyhq/parley/pkg/store"
)

// admitShared is admit counted in Redis, for every server sharing it, in
// one round trip. It returns redislimit.ErrUnavailable when Redis does
// not answer, for admit to count in this process instead.
func (qu Quotas) admitShared(ctx context.Context, sh *redislimit.Limiter, p *platform.Principal, tenantID string, now time.Time) (func(), error) {
	r := qu.rt
	plan, err := r.planOf(ctx, tenantID, now)
	if err != nil {
		return nil, err
	}
	daily, err := r.Quotas().dailyQuota(ctx, tenantID, now)
	if err != nil {
		return nil, err
	}
	tenantLimit, tenantBurst := r.Quotas().tenantRate(plan)
	q := redislimit.Request{Now: now, Tenant: tenantID, Key: p.KeyID,
		TenantRate: redislimit.Rate{PerSecond: float64(tenantLimit), Burst: tenantBurst},
		MaxStreams: r.limits.streams.max, Day: now.Format(store.DayFormat), Quota: daily}
	if k := r.limits.keys; k != nil {
		q.KeyRate = redislimit.Rate{PerSecond: float64(k.limit), Burst: k.burst}
	}
	if q.MaxStreams > 0 {
		q.Stream = r.opts.Owner + "/" + randomHex(6)
	}
	if q.KeyRate.PerSecond <= 0 && q.TenantRate.PerSecond <= 0 && q.MaxStreams == 0 && q.Quota == 0 {
		return func() {}, nil // nothing to count: no round trip
	}
	d, err := sh.Admit(ctx, q)
	if err == nil && d.Refused == redislimit.Unseeded {
		// Redis holds no tokens of today for the tenant: a new day, or a
		// Redis that restarted empty. The database counts them (up to a
		// second late); once seeded, every server adds to Redis.
		if err = r.Quotas().seedTokens(ctx, sh, tenantID, q.Day, now); err == nil {
			d, err = sh.Admit(ctx, q)
		}
	}
	if err != nil {
		return nil, err
	}
	switch d.Refused {
	case redislimit.Passed:
		if q.MaxStreams == 0 {
			return func() {}, nil
		}
		return func() { sh.Release(tenantID, q.Stream) }, nil
	case redislimit.KeyRate:
		return nil, keyTooFast(d.RetryAfter)
	case redislimit.TenantRate:
		return nil, tenantTooFast(d.RetryAfter)
	case redislimit.StreamsBusy:
		return nil, tooManyStreams(d.RetryAfter)
	case redislimit.QuotaUsed:
		r.svc.Webhooks().QuotaReached(ctx, tenantID, q.Day, daily, d.Used, now.Add(untilTomorrow(now)))
		return nil, quotaUsed(now)
	default:
		return nil, r.internal(ctx, "shared limits", redislimit.ErrUnavailable)
	}
}

// seedTokens gives Redis the tenant's tokens of day from the database.
func (q Quotas) seedTokens(ctx context.Context, sh *redislimit.Limiter, tenantID, day string, now time.Time) error {
	r := q.rt
	used, err := r.store.Tenant(tenantID).Usage().DayTokens(ctx, day)
	if err != nil {
		return r.internal(ctx, "daily quota: seed redis", err)
	}
	_, err = sh.Seed(ctx, tenantID, day, used+r.meter.pendingTokens(tenantID, day), now)
	return err
}

// The states of SharedLimits.
const (
	SharedNone = ""     // no Redis: every server counts its own limits
	SharedUp   = "up"   // Redis answers: limits are shared
	SharedDown = "down" // Redis does not answer: each server counts its own, or refuses (fail closed)
)

// SharedLimits says where limits are counted now, for the readiness
// probe: SharedNone, SharedUp or SharedDown.
func (q Quotas) SharedLimits() string {
	r := q.rt
	switch sh := r.opts.Shared; {
	case sh == nil:
		return SharedNone
	case sh.Up():
		return SharedUp
	default:
		return SharedDown
	}
}
