package dialog

import (
	"cmp"
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/parleyhq/parley/pkg/store"
)

// usageFlushEvery is how often metered usage is written to the database:
// what a crash of the process can lose, against a write per model call.
// That write was an eighth of a turn's statements, and every turn of a
// tenant's bot and key waited for the same row's lock to add to it.
const usageFlushEvery = time.Second

// meter adds up usage in memory, per tenant, hour, bot, key and provider, and writes
// the sums to the database every usageFlushEvery. Usage reads and quota
// checks of this process count what is not written yet; those of other
// processes see it at most usageFlushEvery late.
type meter struct {
	store *store.Store
	log   *slog.Logger

	mu      sync.Mutex
	pending map[usageKey]*store.Usage
	// writing is what a flush has taken from pending and not written
	// yet: still counted by pendingTokens, so a quota check during a flush
	// misses none of it.
	writing map[usageKey]*store.Usage
	// flushing lets one flush run at a time, so a batch that failed is
	// back in pending before the next flush takes it.
	flushing sync.Mutex
	// rollups are the analytics counters of turns (tools, latency, cost)
	// not written yet, per tenant, hour, bot, version and channel.
	rollups map[rollupKey]*store.Rollup
}

type rollupKey struct {
	tenant, hour, bot string
	version           int
	channel           string
}

// addRollup counts r (its TenantID, Hour, BotID, VersionNumber and
// Channel say where) towards the analytics rollups.
func (m *meter) addRollup(r store.Rollup) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.addRollupLocked(r)
}

func (m *meter) addRollupLocked(r store.Rollup) {
	if m.rollups == nil {
		m.rollups = map[rollupKey]*store.Rollup{}
	}
	k := rollupKey{r.TenantID, r.Hour, r.BotID, r.VersionNumber, r.Channel}
	if sum, ok := m.rollups[k]; ok {
		sum.Plus(&r)
		return
	}
	m.rollups[k] = &r
}

// flushRollups writes the pending rollups, in key order like usage;
// what fails to be written stays pending.
func (m *meter) flushRollups(ctx context.Context) error {
	m.mu.Lock()
	writing := m.rollups
	m.rollups = nil
	m.mu.Unlock()
	keys := slices.SortedFunc(maps.Keys(writing), func(a, b rollupKey) int {
		return cmp.Or(cmp.Compare(a.tenant, b.tenant), cmp.Compare(a.hour, b.hour), cmp.Compare(a.bot, b.bot),
			cmp.Compare(a.version, b.version), cmp.Compare(a.channel, b.channel))
	})
	for i, k := range keys {
		if err := m.store.Tenant(k.tenant).Insights().Add(ctx, writing[k]); err != nil {
			m.mu.Lock()
			for _, rest := range keys[i:] {
				m.addRollupLocked(*writing[rest])
			}
			m.mu.Unlock()
			return err
		}
	}
	return nil
}

type usageKey struct{ tenant, day, hour, bot, key, provider string }

func newMeter(st *store.Store, log *slog.Logger) *meter {
	return &meter{store: st, log: log, pending: map[usageKey]*store.Usage{}}
}

// add counts u.
func (m *meter) add(u store.Usage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.addLocked(u)
}

func (m *meter) addLocked(u store.Usage) {
	k := usageKey{u.TenantID, u.Day, u.Hour, u.BotID, u.KeyID, u.Provider}
	sum, ok := m.pending[k]
	if !ok {
		m.pending[k] = &u
		return
	}
	sum.InputTokens += u.InputTokens
	sum.OutputTokens += u.OutputTokens
	sum.CostMicroUSD += u.CostMicroUSD
	sum.ToolCalls += u.ToolCalls
	sum.Turns += u.Turns
	sum.Messages += u.Messages
	sum.ToolErrors += u.ToolErrors
	sum.EmbeddingTokens += u.EmbeddingTokens
}

// pendingTokens is the tenant's input, output and embedding tokens of day
// not yet written.
func (m *meter) pendingTokens(tenantID, day string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for _, sums := range []map[usageKey]*store.Usage{m.pending, m.writing} {
		for k, u := range sums {
			if k.tenant == tenantID && k.day == day {
				n += u.InputTokens + u.OutputTokens + u.EmbeddingTokens
			}
		}
	}
	return n
}

// flush writes what is pending. Rows are written in one order (by tenant,
// day, hour, bot, key and provider) in every process, so two flushes never wait on each
// other's rows in a cycle. What fails to be written stays pending.
func (m *meter) flush(ctx context.Context) error {
	m.flushing.Lock()
	defer m.flushing.Unlock()
	if err := m.flushRollups(ctx); err != nil {
		return err
	}
	m.mu.Lock()
	m.writing, m.pending = m.pending, map[usageKey]*store.Usage{}
	keys := slices.SortedFunc(maps.Keys(m.writing), func(a, b usageKey) int {
		return cmp.Or(cmp.Compare(a.tenant, b.tenant), cmp.Compare(a.day, b.day), cmp.Compare(a.hour, b.hour), cmp.Compare(a.bot, b.bot), cmp.Compare(a.key, b.key), cmp.Compare(a.provider, b.provider))
	})
	m.mu.Unlock()
	for _, k := range keys {
		err := m.store.Tenant(m.writing[k].TenantID).Usage().Add(ctx, m.writing[k]) // only this flush changes writing
		m.mu.Lock()
		if err != nil {
			for _, u := range m.writing {
				m.addLocked(*u)
			}
			m.writing = nil
			m.mu.Unlock()
			return err
		}
		delete(m.writing, k)
		m.mu.Unlock()
	}
	return nil
}

// run flushes every usageFlushEvery until ctx ends.
func (m *meter) run(ctx context.Context) {
	t := time.NewTicker(usageFlushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := m.flush(ctx); err != nil && ctx.Err() == nil {
				m.log.Error("dialog: write metered usage; retrying", "err", err)
			}
		}
	}
}
