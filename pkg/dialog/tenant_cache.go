package dialog

import (
	"context"
	"sync"
	"time"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
)

// tenantCacheTTL bounds how long a tenant reference is trusted without
// reading it again. A tenant's id and slug never change and tenants are
// never deleted today (an update changes only its settings, which the
// cache does not hold), so a hit is never wrong; the bound keeps a future
// rename or deletion from going unseen for long.
const tenantCacheTTL = time.Minute

// tenantCache maps tenant references (id or slug) to tenant ids for the
// turn path, which otherwise reads the tenant row on every message. It
// holds no permission: the caller is authorised on every request, so a
// revoked key or a lost role still fails at once. Only tenants that exist
// are cached, so a new one is usable immediately.
type tenantCache struct {
	mu  sync.Mutex
	max int
	ids map[string]tenantEntry
}

type tenantEntry struct {
	id    string
	until time.Time
}

func newTenantCache(max int) *tenantCache {
	return &tenantCache{max: max, ids: map[string]tenantEntry{}}
}

// get returns the id of the tenant ref names, if known and fresh.
func (c *tenantCache) get(ref string, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.ids[ref]
	if !ok || now.After(e.until) {
		return "", false
	}
	return e.id, true
}

// put remembers that ref names the tenant with this id.
func (c *tenantCache) put(ref, id string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.ids) >= c.max {
		for k := range c.ids { // evict one arbitrary entry; a miss costs one read
			delete(c.ids, k)
			break
		}
	}
	c.ids[ref] = tenantEntry{id: id, until: now.Add(tenantCacheTTL)}
}

// chatTenant is tenantFor(ObjDialogs, ActChat) for a turn, with the
// tenant's id from the cache when it can: the row is read once a minute
// per reference instead of once or twice per message.
func (r *Runtime) chatTenant(ctx context.Context, p *platform.Principal, ref string) (string, error) {
	if p == nil {
		return "", platform.Errorf(platform.CodeUnauthorized, "authentication required")
	}
	now := time.Now()
	id, ok := r.tenants.get(ref, now)
	if !ok {
		t, err := r.store.Tenants().Get(ctx, ref)
		if err != nil {
			return "", r.storeErr(ctx, "resolve tenant", "tenant", err)
		}
		id = t.ID
		r.tenants.put(ref, id, now)
	}
	if err := r.svc.Auth().Authorize(p, id, auth.ObjDialogs, auth.ActChat); err != nil {
		return "", err
	}
	return id, nil
}
