package dialog

import (
	"context"
	"sync"
	"time"

	"github.com/parleyhq/parley/pkg/platform"
)

// planCacheTTL is how long a tenant's limits are trusted without reading
// them again: a changed plan takes effect within it, and the turn path
// reads no extra row per message.
const planCacheTTL = time.Minute

// planCache remembers tenants' own limits (platform.TenantLimits) by
// tenant id.
type planCache struct {
	mu    sync.Mutex
	max   int
	plans map[string]planEntry
}

type planEntry struct {
	limits platform.TenantLimits
	until  time.Time
}

func newPlanCache(max int) *planCache {
	return &planCache{max: max, plans: map[string]planEntry{}}
}

// planOf returns the tenant's own limits, read at most once a
// planCacheTTL.
func (r *Runtime) planOf(ctx context.Context, tenantID string, now time.Time) (platform.TenantLimits, error) {
	c := r.plans
	c.mu.Lock()
	e, ok := c.plans[tenantID]
	c.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.limits, nil
	}
	l, err := r.svc.Limits().Of(ctx, tenantID)
	if err != nil {
		return platform.TenantLimits{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.plans) >= c.max {
		for k := range c.plans { // evict one arbitrary entry; a miss costs one read
			delete(c.plans, k)
			break
		}
	}
	c.plans[tenantID] = planEntry{limits: l, until: now.Add(planCacheTTL)}
	return l, nil
}
