package store

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Webhooks are a tenant's webhook endpoints, events and deliveries: reach
// them with Store.Tenant(id).Webhooks().
type Webhooks struct{ scope }

// Outbox is the webhook outbox of every tenant, for the workers' claim
// loop and its sweep: Store.Outbox(). Cross-tenant.
type Outbox struct {
	s   *Store
	now func() time.Time
}

// WithClock returns the outbox on now's clock: what is due to a claim, how
// long its lease runs, and when an attempt is recorded. The deliverer
// passes its own, so a test advances time instead of waiting for it.
func (o Outbox) WithClock(now func() time.Time) Outbox {
	o.now = func() time.Time { return now().UTC() }
	return o
}

// Id prefixes of the webhook subject.
const (
	PrefixWebhook         = "whk"
	PrefixWebhookEvent    = "evt"
	PrefixWebhookDelivery = "whd"
	PrefixWebhookAttempt  = "wha"
)

// Delivery statuses. A delivery in flight is pending with a claim.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
)

// WebhookEndpoint is a tenant's receiver of events. Its secrets are sealed
// by the caller like tenant secrets: the database sees ciphertext only.
type WebhookEndpoint struct {
	ID       string `gorm:"primaryKey"`
	TenantID string
	Name     string
	URL      string
	// Description says what the receiver is, for the people managing it.
	Description string
	// Events is the JSON array of subscribed types ("*" for all).
	Events string
	// BotID limits the endpoint to one bot's events; "" is every bot.
	BotID          string
	Enabled        bool
	DisabledReason string
	SecretNonce    []byte
	SecretCipher   []byte
	// The previous secret still signs until PrevExpiresAt, after a
	// rotation.
	PrevNonce     []byte
	PrevCipher    []byte
	PrevExpiresAt *time.Time
	// FailingSince is the first failure since the last success; nil while
	// deliveries succeed.
	FailingSince *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// WebhookEvent is an outbox row: the signed body of one event, written in
// the transaction of the fact it reports.
type WebhookEvent struct {
	ID        string `gorm:"primaryKey"`
	TenantID  string
	Type      string
	DedupeKey string
	// DialogID is the dialog the event reports, "" for none: erasing the
	// dialog deletes the event, whose body may quote its messages.
	DialogID  string
	Body      string
	CreatedAt time.Time
}

// WebhookDelivery is one event on its way to one endpoint.
type WebhookDelivery struct {
	ID            string `gorm:"primaryKey"`
	TenantID      string
	EndpointID    string
	EventID       string
	Status        string
	Attempts      int
	NextAttemptAt time.Time
	Claim         string
	LastStatus    int
	LastError     string
	DeliveredAt   *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// EventType is read with the delivery, not stored on it.
	EventType string `gorm:"->;-:migration"`
}

// WebhookAttempt is one HTTP attempt of a delivery, for the delivery log.
type WebhookAttempt struct {
	ID         string `gorm:"primaryKey"`
	TenantID   string
	DeliveryID string
	Number     int
	Status     int
	DurationMS int64
	Excerpt    string
	Error      string
	CreatedAt  time.Time
}

// bumpWebhooks counts a change of endpoints, in the change's transaction,
// so every process's cache of subscriptions sees it (Outbox.Version).
func (s *Store) bumpWebhooks(ctx context.Context) error {
	return s.q(ctx).Exec("UPDATE webhook_endpoints_version SET version = version + 1 WHERE id = 1").Error
}

// Version returns the count of endpoint changes so far.
func (o Outbox) Version(ctx context.Context) (int64, error) {
	s := o.s
	var v []int64
	err := s.q(ctx).Table("webhook_endpoints_version").Where("id = 1").Pluck("version", &v).Error
	if err != nil || len(v) == 0 {
		return 0, wrap("webhooks version", err)
	}
	return v[0], nil
}

// Create inserts e, giving it an id. A name the tenant uses
// already is ErrConflict.
func (we Webhooks) Create(ctx context.Context, e *WebhookEndpoint) error {
	s := we.s
	e.TenantID = we.tenant
	if e.ID == "" {
		e.ID = NewID(PrefixWebhook)
	}
	return wrap("create webhook", s.Tx(ctx, func(tx *Store) error {
		if err := tx.q(ctx).Create(e).Error; err != nil {
			return err
		}
		return tx.bumpWebhooks(ctx)
	}))
}

// Get finds the tenant's endpoint by id or name.
func (we Webhooks) Get(ctx context.Context, idOrName string) (*WebhookEndpoint, error) {
	s, tenantID := we.s, we.tenant
	var e WebhookEndpoint
	err := s.q(ctx).Where("tenant_id = ? AND (id = ? OR (name <> '' AND name = ?))", tenantID, idOrName, idOrName).First(&e).Error
	if err != nil {
		return nil, wrap("get webhook", err)
	}
	return &e, nil
}

// List returns all of the tenant's endpoints, oldest first.
func (we Webhooks) List(ctx context.Context) ([]WebhookEndpoint, error) {
	s, tenantID := we.s, we.tenant
	var rows []WebhookEndpoint
	if err := s.q(ctx).Where("tenant_id = ?", tenantID).Order("id").Find(&rows).Error; err != nil {
		return nil, wrap("list webhooks", err)
	}
	return rows, nil
}

// Update sets fields (column: value) of the tenant's
// endpoint.
func (we Webhooks) Update(ctx context.Context, id string, fields map[string]any) error {
	s, tenantID := we.s, we.tenant
	fields["updated_at"] = s.db.NowFunc()
	return wrap("update webhook", s.Tx(ctx, func(tx *Store) error {
		res := tx.q(ctx).Model(&WebhookEndpoint{}).Where("tenant_id = ? AND id = ?", tenantID, id).Updates(fields)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		return tx.bumpWebhooks(ctx)
	}))
}

// Delete removes the tenant's endpoint with its deliveries.
func (we Webhooks) Delete(ctx context.Context, id string) error {
	s, tenantID := we.s, we.tenant
	return wrap("delete webhook", s.Tx(ctx, func(tx *Store) error {
		res := tx.q(ctx).Where("tenant_id = ? AND id = ?", tenantID, id).Delete(&WebhookEndpoint{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		return tx.bumpWebhooks(ctx)
	}))
}

// Subscribers returns the tenant's enabled endpoints with only what
// deciding who gets an event needs (id, events, bot), and the tenant's
// slug, for the envelope.
func (we Webhooks) Subscribers(ctx context.Context) (string, []WebhookEndpoint, error) {
	s, tenantID := we.s, we.tenant
	t, err := s.Tenants().Get(ctx, tenantID)
	if err != nil {
		return "", nil, err
	}
	var rows []WebhookEndpoint
	err = s.q(ctx).Select("id", "tenant_id", "events", "bot_id").
		Where("tenant_id = ? AND enabled = ?", tenantID, true).Order("id").Find(&rows).Error
	if err != nil {
		return "", nil, wrap("webhook subscribers", err)
	}
	return t.Slug, rows, nil
}

// AddEvent writes ev to the outbox with one pending delivery to
// each endpoint, due at once. Call it inside the transaction of the fact
// the event reports, so both commit or neither does. An event with a
// DedupeKey the tenant has used already writes nothing and reports
// added false.
func (we Webhooks) AddEvent(ctx context.Context, ev *WebhookEvent, endpointIDs []string) (bool, error) {
	s := we.s
	ev.TenantID = we.tenant
	if ev.ID == "" {
		ev.ID = NewID(PrefixWebhookEvent)
	}
	now := s.db.NowFunc()
	ev.CreatedAt = now
	q := s.w(ctx)
	if ev.DedupeKey != "" {
		q = q.Clauses(clause.OnConflict{DoNothing: true})
	}
	res := q.Create(ev)
	if res.Error != nil {
		return false, wrap("add webhook event", res.Error)
	}
	if res.RowsAffected == 0 {
		return false, nil
	}
	if len(endpointIDs) == 0 {
		return true, nil
	}
	rows := make([]WebhookDelivery, len(endpointIDs))
	for i, id := range endpointIDs {
		rows[i] = WebhookDelivery{ID: NewID(PrefixWebhookDelivery), TenantID: ev.TenantID, EndpointID: id,
			EventID: ev.ID, Status: DeliveryPending, NextAttemptAt: now, CreatedAt: now, UpdatedAt: now}
	}
	return true, wrap("add webhook deliveries", s.w(ctx).Omit("event_type").Create(&rows).Error)
}

// Claimed is a delivery a worker claimed, with what sending it needs.
type Claimed struct {
	Delivery WebhookDelivery
	Endpoint WebhookEndpoint
	Body     string
	// DueAt is when the delivery fell due, before the claim moved it.
	DueAt time.Time
}

// Claim claims up to limit due deliveries for claim (a
// token of the worker's): each is due again after lease, should the worker
// die before it finishes, and counts one attempt more. On PostgreSQL
// concurrent workers skip each other's rows (FOR UPDATE SKIP LOCKED); on
// SQLite the write lock taken at BEGIN serialises them. Either way a
// delivery is claimed by one worker at a time. Unlike the tenant methods
// it spans tenants, as the deliverer serves them all: each delivery
// carries its tenant, by which Outbox.Finish scopes its writes.
//
// The lease counts from the claim's transaction, not from the call: on a
// busy database the wait for a connection (SQLite has one) must not eat
// into it, or an attempt in flight would be claimed, and sent, again.
//
// skip names deliveries the caller has in flight, which it never claims
// again, even past their lease.
func (o Outbox) Claim(ctx context.Context, claim string, lease time.Duration, limit int, skip []string) ([]Claimed, error) {
	s := o.s
	lock := ""
	if s.dialect == DialectPostgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	notSkipped, args := "", []any{}
	if len(skip) > 0 {
		notSkipped, args = " AND id NOT IN ?", []any{skip}
	}
	var out []Claimed
	err := s.Tx(ctx, func(tx *Store) error {
		now := o.now()
		var due []struct {
			ID            string
			NextAttemptAt time.Time
		}
		err := tx.q(ctx).Raw(`SELECT id, next_attempt_at FROM webhook_deliveries
WHERE status = 'pending' AND next_attempt_at <= ?`+notSkipped+` ORDER BY next_attempt_at LIMIT ?`+lock,
			append(append([]any{now}, args...), limit)...).Scan(&due).Error
		if err != nil || len(due) == 0 {
			return err
		}
		ids := make([]string, len(due))
		dueAt := make(map[string]time.Time, len(due))
		for i, d := range due {
			ids[i], dueAt[d.ID] = d.ID, d.NextAttemptAt
		}
		err = tx.q(ctx).Exec(`UPDATE webhook_deliveries SET claim = ?, next_attempt_at = ?, attempts = attempts + 1, updated_at = ?
WHERE id IN ?`, claim, now.Add(lease), now, ids).Error
		if err != nil {
			return err
		}
		var ds []WebhookDelivery
		if err := tx.q(ctx).Omit("event_type").Where("id IN ?", ids).Order("id").Find(&ds).Error; err != nil {
			return err
		}
		var eps []WebhookEndpoint
		if err := tx.q(ctx).Where("id IN ?", pluck(ds, func(d WebhookDelivery) string { return d.EndpointID })).Find(&eps).Error; err != nil {
			return err
		}
		var evs []WebhookEvent
		if err := tx.q(ctx).Where("id IN ?", pluck(ds, func(d WebhookDelivery) string { return d.EventID })).Find(&evs).Error; err != nil {
			return err
		}
		epByID := make(map[string]WebhookEndpoint, len(eps))
		for _, e := range eps {
			epByID[e.ID] = e
		}
		evByID := make(map[string]WebhookEvent, len(evs))
		for _, e := range evs {
			evByID[e.ID] = e
		}
		for _, d := range ds {
			ev := evByID[d.EventID]
			d.EventType = ev.Type
			out = append(out, Claimed{Delivery: d, Endpoint: epByID[d.EndpointID], Body: ev.Body, DueAt: dueAt[d.ID]})
		}
		return nil
	})
	return out, wrap("claim webhook deliveries", err)
}

func pluck[T any](rows []T, f func(T) string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out
}

// ReleaseClaims makes every claimed delivery due now. Only a server
// that holds the SQLite data dir for itself may call it, at start: no other
// worker can be delivering them.
func (o Outbox) ReleaseClaims(ctx context.Context, now time.Time) (int64, error) {
	s := o.s
	res := s.w(ctx).Exec("UPDATE webhook_deliveries SET claim = '', next_attempt_at = ? WHERE status = 'pending' AND claim <> ''", now)
	return res.RowsAffected, wrap("release webhook claims", res.Error)
}

// Finish is what a worker records after an attempt.
type Finish struct {
	TenantID, DeliveryID, EndpointID, Claim string
	// Attempt is the log row; nil when nothing was sent.
	Attempt *WebhookAttempt
	// Status is the delivery's new status; pending retries at NextAttemptAt.
	Status        string
	NextAttemptAt time.Time
	LastError     string
	// Succeeded clears the endpoint's failing streak; otherwise one starts
	// unless it runs already.
	Succeeded bool
	// Disable, when set, disables the endpoint and says why.
	Disable string
	// DisableIfFailing disables the endpoint saying this, when no attempt
	// to it succeeded since this delivery's first attempt: the delivery
	// gave up, and the endpoint took nothing meanwhile.
	DisableIfFailing string
}

// Finish records an attempt and its consequences in one
// commit, if the claim is still the worker's; a claim that lapsed and was
// taken by another worker is ErrConflict and records nothing.
func (o Outbox) Finish(ctx context.Context, f Finish) error {
	s := o.s
	now := o.now()
	return wrap("finish webhook delivery", s.Tx(ctx, func(tx *Store) error {
		fields := map[string]any{"status": f.Status, "next_attempt_at": f.NextAttemptAt, "claim": "",
			"last_error": f.LastError, "updated_at": now}
		if f.Attempt != nil {
			fields["last_status"] = f.Attempt.Status
		}
		if f.Status == DeliverySucceeded {
			fields["delivered_at"] = now
		}
		res := tx.q(ctx).Model(&WebhookDelivery{}).Where("tenant_id = ? AND id = ? AND claim = ?", f.TenantID, f.DeliveryID, f.Claim).
			Omit("event_type").Updates(fields)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrConflict
		}
		if f.Attempt != nil {
			f.Attempt.ID, f.Attempt.TenantID, f.Attempt.DeliveryID, f.Attempt.CreatedAt = NewID(PrefixWebhookAttempt), f.TenantID, f.DeliveryID, now
			if err := tx.q(ctx).Create(f.Attempt).Error; err != nil {
				return err
			}
		}
		ep := tx.q(ctx).Model(&WebhookEndpoint{}).Where("tenant_id = ? AND id = ?", f.TenantID, f.EndpointID)
		switch {
		case f.Disable != "":
			if err := ep.Updates(map[string]any{"enabled": false, "disabled_reason": f.Disable, "updated_at": now}).Error; err != nil {
				return err
			}
			return tx.bumpWebhooks(ctx)
		case f.Succeeded:
			return ep.Where("failing_since IS NOT NULL").Update("failing_since", nil).Error
		case f.Attempt == nil:
			return nil
		}
		if err := ep.Where("failing_since IS NULL").Update("failing_since", now).Error; err != nil {
			return err
		}
		if f.DisableIfFailing == "" {
			return nil
		}
		res = tx.q(ctx).Model(&WebhookEndpoint{}).Where("tenant_id = ? AND id = ? AND failing_since <= "+
			"(SELECT MAX(created_at) FROM webhook_attempts WHERE delivery_id = ? AND number = 1)", f.TenantID, f.EndpointID, f.DeliveryID).
			Updates(map[string]any{"enabled": false, "disabled_reason": f.DisableIfFailing, "updated_at": now})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		return tx.bumpWebhooks(ctx)
	}))
}

// Deliveries returns one page of the endpoint's deliveries,
// newest first, each with its event's type.
func (we Webhooks) Deliveries(ctx context.Context, endpointID string, p Page) ([]WebhookDelivery, string, error) {
	s, tenantID := we.s, we.tenant
	q := s.q(ctx).Table("webhook_deliveries AS d").Select("d.*, e.type AS event_type").
		Joins("JOIN webhook_events e ON e.id = d.event_id").
		Where("d.tenant_id = ? AND d.endpoint_id = ?", tenantID, endpointID)
	if p.Cursor != "" {
		if !idPattern.MatchString(p.Cursor) {
			return nil, "", wrap("list webhook deliveries", ErrInvalidCursor)
		}
		q = q.Where("d.id < ?", p.Cursor)
	}
	var rows []WebhookDelivery
	if err := q.Order("d.id DESC").Limit(p.limit() + 1).Find(&rows).Error; err != nil {
		return nil, "", wrap("list webhook deliveries", err)
	}
	rows, next := nextCursor(rows, p, func(d WebhookDelivery) string { return d.ID })
	return rows, next, nil
}

// Attempts returns the attempts of the tenant's deliveries, oldest
// first.
func (we Webhooks) Attempts(ctx context.Context, deliveryIDs []string) ([]WebhookAttempt, error) {
	s, tenantID := we.s, we.tenant
	var rows []WebhookAttempt
	if len(deliveryIDs) == 0 {
		return rows, nil
	}
	err := s.q(ctx).Where("tenant_id = ? AND delivery_id IN ?", tenantID, deliveryIDs).Order("id").Find(&rows).Error
	return rows, wrap("webhook attempts", err)
}

// Delivery finds the endpoint's delivery, with its event type.
func (we Webhooks) Delivery(ctx context.Context, endpointID, id string) (*WebhookDelivery, error) {
	s, tenantID := we.s, we.tenant
	var d WebhookDelivery
	err := s.q(ctx).Table("webhook_deliveries AS d").Select("d.*, e.type AS event_type").
		Joins("JOIN webhook_events e ON e.id = d.event_id").
		Where("d.tenant_id = ? AND d.endpoint_id = ? AND d.id = ?", tenantID, endpointID, id).Take(&d).Error
	if err != nil {
		return nil, wrap("get webhook delivery", err)
	}
	return &d, nil
}

// Replay makes the endpoint's delivery due now with a fresh
// schedule, whatever became of it; the event keeps its id, so a receiver
// that had it can tell.
func (we Webhooks) Replay(ctx context.Context, endpointID, id string) error {
	s, tenantID := we.s, we.tenant
	now := s.db.NowFunc()
	res := s.w(ctx).Model(&WebhookDelivery{}).Where("tenant_id = ? AND endpoint_id = ? AND id = ?", tenantID, endpointID, id).
		Omit("event_type").Updates(map[string]any{"status": DeliveryPending, "attempts": 0, "next_attempt_at": now,
		"claim": "", "delivered_at": gorm.Expr("NULL"), "updated_at": now})
	if res.Error != nil {
		return wrap("replay webhook delivery", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("replay webhook delivery", ErrNotFound)
	}
	return nil
}

// Prune deletes the events written before before whose
// deliveries are all settled, with their deliveries and attempts (the
// foreign keys cascade), at most limit of them; it returns how many went.
// It spans tenants, like the claim: retention is the platform's.
func (o Outbox) Prune(ctx context.Context, before time.Time, limit int) (int64, error) {
	s := o.s
	res := s.w(ctx).Exec(`DELETE FROM webhook_events WHERE id IN (SELECT e.id FROM webhook_events e
WHERE e.created_at < ? AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
ORDER BY e.id LIMIT ?)`, before, limit)
	return res.RowsAffected, wrap("prune webhook events", res.Error)
}
