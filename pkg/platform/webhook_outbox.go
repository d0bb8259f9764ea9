package platform

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/webhook"
)

// subscriptions remembers, per tenant, which enabled endpoints subscribe
// to what, so a fact no endpoint subscribes to costs no database work
// at all: a turn of a tenant without webhooks writes exactly what it
// wrote before webhooks existed.
//
// This process's own changes drop their tenant at once. A server process
// also polls the endpoints' change counter (store.Outbox.Version, see
// WatchWebhooks) every second and drops everything when it moved, so an
// endpoint created through another process (another replica, parley
// apply) receives the events of facts committed from a second after its
// creation at the latest. While that poll fails the cache is off and
// every event reads its subscribers.
type subscriptions struct {
	mu      sync.Mutex
	live    bool
	polled  bool   // a poll set version
	gen     uint64 // bumped by every drop, so a load racing one is not kept
	version int64
	tenants map[string]*tenantHooks
}

// tenantHooks is one tenant's slug and enabled endpoints.
type tenantHooks struct {
	slug      string
	endpoints []hookTarget
}

type hookTarget struct {
	id     string
	events []string
	botID  string
}

func newSubscriptions() *subscriptions {
	return &subscriptions{live: true, tenants: map[string]*tenantHooks{}}
}

// wants reports whether t takes events of typ about botID.
func (t hookTarget) wants(typ, botID string) bool {
	if t.botID != "" && t.botID != botID {
		return false
	}
	return slices.Contains(t.events, typ) || slices.Contains(t.events, webhook.Wildcard)
}

// tenantHooks returns the tenant's hooks, from the cache when it is live.
func (w Webhooks) tenantHooks(ctx context.Context, tenantID string) (*tenantHooks, error) {
	s := w.svc
	c := s.hooks
	c.mu.Lock()
	h, ok := c.tenants[tenantID]
	live, gen := c.live, c.gen
	c.mu.Unlock()
	if ok && live {
		return h, nil
	}
	slug, rows, err := s.store.Tenant(tenantID).Webhooks().Subscribers(ctx)
	if err != nil {
		return nil, err
	}
	h = &tenantHooks{slug: slug}
	for _, r := range rows {
		var events []string
		_ = json.Unmarshal([]byte(r.Events), &events) // written by CreateWebhook, always a list
		h.endpoints = append(h.endpoints, hookTarget{id: r.ID, events: events, botID: r.BotID})
	}
	c.mu.Lock()
	if c.live && c.gen == gen {
		c.tenants[tenantID] = h
	}
	c.mu.Unlock()
	return h, nil
}

// drop forgets one tenant's hooks ("" forgets all).
func (c *subscriptions) drop(tenantID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if tenantID == "" {
		clear(c.tenants)
		return
	}
	delete(c.tenants, tenantID)
}

// setVersion records the change counter read by a poll (ok false: the
// poll failed, and the cache is off until one succeeds); everything is
// dropped when it moved.
func (c *subscriptions) setVersion(v int64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !ok {
		c.live, c.polled = false, false
		c.gen++
		clear(c.tenants)
		return
	}
	if c.live && c.polled && v == c.version {
		return
	}
	c.live, c.polled, c.version = true, true, v
	c.gen++
	clear(c.tenants)
}

// hooksPoll is how often a server process checks for endpoint changes
// made by other processes.
const hooksPoll = time.Second

// Watch keeps this process's cache of webhook subscriptions in
// step with other processes' changes until ctx ends. `parley serve` runs
// it; a process that runs alone on its database needs it not.
func (w Webhooks) Watch(ctx context.Context) {
	s := w.svc
	t := time.NewTicker(hooksPoll)
	defer t.Stop()
	for {
		v, err := s.store.Outbox().Version(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("webhooks: cannot read endpoint changes; every event reads its subscribers until this recovers", "err", err)
		}
		s.hooks.setVersion(v, err == nil)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Event is a webhook event about to be written with the fact it reports.
type Event struct {
	TenantID string
	// BotID is the bot the event is about, for endpoints filtered to one
	// bot; "" for tenant-wide events.
	BotID string
	// DialogID is the dialog the event is about, "" for none. Every event
	// about a dialog must name it: erasing the dialog deletes the events
	// that name it, whose bodies may quote what the end user wrote.
	DialogID string
	// Type is one of webhook.Types.
	Type string
	// Dedupe, when set, makes the event once per tenant and key.
	Dedupe string
}

// WithEvent runs fact and, when an enabled endpoint of the tenant
// subscribes to ev, writes the event data fact returns to the outbox in
// the same transaction: both commit or neither does. With no subscriber
// fact runs on the store as it would without webhooks: no transaction,
// no statement more. fact must do its writes through st.
func (w Webhooks) WithEvent(ctx context.Context, ev Event, fact func(st *store.Store) (data any, err error)) error {
	s := w.svc
	if webhook.AboutDialog(ev.Type) && ev.DialogID == "" {
		// A writer's bug, caught before anything is written: erasure finds
		// an event only by the dialog it names.
		return s.internal(ctx, "webhook event", fmt.Errorf("a %s event must name its dialog (Event.DialogID)", ev.Type))
	}
	h, targets, err := s.Webhooks().eventTargets(ctx, ev)
	if err != nil {
		return err
	}
	if len(targets) == 0 {
		_, err := fact(s.store)
		return err
	}
	err = s.store.Tx(ctx, func(tx *store.Store) error {
		data, err := fact(tx)
		if err != nil {
			return err
		}
		return writeEvent(ctx, tx, h.slug, ev, data, targets, s.now())
	})
	if err == nil {
		s.Webhooks().wakeDeliverer()
	}
	return err
}

// eventTargets are the tenant's hooks and the ids of its endpoints that
// take ev.
func (w Webhooks) eventTargets(ctx context.Context, ev Event) (*tenantHooks, []string, error) {
	s := w.svc
	h, err := s.Webhooks().tenantHooks(ctx, ev.TenantID)
	if err != nil {
		return nil, nil, err
	}
	var targets []string
	for _, t := range h.endpoints {
		if t.wants(ev.Type, ev.BotID) {
			targets = append(targets, t.id)
		}
	}
	return h, targets, nil
}

// writeEvent adds one outbox row and its deliveries.
func writeEvent(ctx context.Context, tx *store.Store, slug string, ev Event, data any, targets []string, now time.Time) error {
	body, err := webhook.Body(ev.Type, slug, now, data)
	if err != nil {
		return err
	}
	_, err = tx.Tenant(ev.TenantID).Webhooks().AddEvent(ctx, &store.WebhookEvent{TenantID: ev.TenantID, Type: ev.Type, DedupeKey: ev.Dedupe, DialogID: ev.DialogID, Body: string(body)}, targets)
	return err
}

// wakeDeliverer tells this process's deliverer that an event is waiting,
// so the first attempt is immediate rather than at its next poll.
func (w Webhooks) wakeDeliverer() {
	s := w.svc
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Subscribes reports whether an enabled endpoint of the tenant takes
// events of typ about any of its bots: for a fact whose writing differs
// when it has an event to carry. It reads the database only when this
// process's cache lacks the tenant.
func (w Webhooks) Subscribes(ctx context.Context, tenantID, typ string) (bool, error) {
	s := w.svc
	h, err := s.Webhooks().tenantHooks(ctx, tenantID)
	if err != nil {
		return false, err
	}
	for _, t := range h.endpoints {
		if slices.Contains(t.events, typ) || slices.Contains(t.events, webhook.Wildcard) {
			return true, nil
		}
	}
	return false, nil
}
