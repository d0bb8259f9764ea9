package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/webhook"
)

// Webhooks is a tenant's webhook endpoints and the events they receive: reach it with Service.Webhooks().
type Webhooks struct{ svc *Service }

// Webhooks returns a tenant's webhook endpoints and the events they receive.
func (s *Service) Webhooks() Webhooks { return Webhooks{s} }

// RotationOverlap is how long an endpoint's previous secret keeps signing
// after a rotation, beside the new one: a day for the receiver to deploy
// the new secret. Until then every message carries both signatures.
const RotationOverlap = 24 * time.Hour

// MaxWebhookURL caps an endpoint URL's length.
const MaxWebhookURL = 2048

// MaxWebhookDescription caps an endpoint description's length.
const MaxWebhookDescription = 500

// Webhook is an endpoint as callers see it, in its wire form: never its
// secret.
type Webhook = apiclient.Webhook

// CreatedWebhook is a new endpoint with its secret, shown this once, in
// its wire form.
type CreatedWebhook = apiclient.NewWebhook

// WebhookInput is a new endpoint: {url, events, bot?, enabled?}, and the
// optional name and secret parley apply sets.
type WebhookInput struct {
	Name        string
	URL         string
	Description string
	Events      []string
	Bot         string
	Enabled     *bool
	// Secret is a whsec_ secret the caller chose; empty generates one.
	Secret string
}

// WebhookPatch changes the fields that are set.
type WebhookPatch struct {
	URL         *string
	Description *string
	Events      *[]string
	Bot         *string
	Enabled     *bool
}

// WebhookDelivery is one event's delivery to an endpoint, with its
// attempts, in its wire form.
type WebhookDelivery = apiclient.WebhookDelivery

// WebhookAttempt is one HTTP attempt in its wire form: no headers, so no
// signature.
type WebhookAttempt = apiclient.WebhookAttempt

func webhookView(e *store.WebhookEndpoint) Webhook {
	var events []string
	_ = json.Unmarshal([]byte(e.Events), &events)
	w := Webhook{ID: e.ID, Name: e.Name, URL: e.URL, Description: e.Description, Events: nonNil(events), Bot: e.BotID, Enabled: e.Enabled,
		DisabledReason: e.DisabledReason, FailingSince: e.FailingSince, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
	if e.PrevExpiresAt != nil && e.PrevExpiresAt.After(time.Now()) {
		w.PreviousSecretExpiresAt = e.PrevExpiresAt
	}
	return w
}

// Create adds an endpoint and returns it with its secret, which is
// never shown again.
func (w Webhooks) Create(ctx context.Context, p *Principal, tenant string, in WebhookInput) (CreatedWebhook, error) {
	s := w.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjWebhooks, auth.ActWrite)
	if err != nil {
		return CreatedWebhook{}, err
	}
	var ps problems
	if in.Name != "" {
		ps.slug("/name", in.Name)
	}
	s.Webhooks().checkWebhookURL(ctx, &ps, in.URL)
	checkDescription(&ps, in.Description)
	checkEvents(&ps, in.Events)
	botID := s.Webhooks().webhookBot(ctx, &ps, t.ID, in.Bot)
	secret := in.Secret
	if secret == "" {
		if secret, err = webhook.NewSecret(); err != nil {
			return CreatedWebhook{}, s.internal(ctx, "webhook secret", err)
		}
	} else if _, err := webhook.SecretKey(secret); err != nil {
		ps.add("/secret", "%s", err.Error())
	}
	if err := ps.err(); err != nil {
		return CreatedWebhook{}, err
	}
	events, _ := json.Marshal(in.Events)
	e := store.WebhookEndpoint{ID: store.NewID(store.PrefixWebhook), TenantID: t.ID, Name: in.Name, URL: in.URL,
		Description: in.Description, Events: string(events), BotID: botID, Enabled: in.Enabled == nil || *in.Enabled}
	if e.SecretNonce, e.SecretCipher, err = s.Webhooks().sealWebhookSecret(t.ID, e.ID, secret); err != nil {
		return CreatedWebhook{}, s.internal(ctx, "seal webhook secret", err)
	}
	err = s.AuditLog().audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		return auditRecord{action: AuditWebhookCreated, target: e.ID, detail: webhookDetail(&e)}, tx.Tenant(e.TenantID).Webhooks().Create(ctx, &e)
	})
	if err != nil {
		return CreatedWebhook{}, s.storeErr(ctx, "create webhook", "webhook", "a webhook named "+in.Name+" already exists", err)
	}
	s.hooks.drop(t.ID)
	return CreatedWebhook{Webhook: webhookView(&e), Secret: secret}, nil
}

// sealWebhookSecret encrypts an endpoint's secret like a tenant secret,
// bound to the endpoint so a ciphertext cannot be moved to another.
func (w Webhooks) sealWebhookSecret(tenantID, endpointID, secret string) ([]byte, []byte, error) {
	s := w.svc
	return s.opts.Sealer.Seal(tenantID, "webhook:"+endpointID, []byte(secret))
}

func (w Webhooks) openWebhookSecret(tenantID, endpointID string, nonce, cipher []byte) ([]byte, error) {
	s := w.svc
	plain, err := s.opts.Sealer.Open(tenantID, "webhook:"+endpointID, nonce, cipher)
	if err != nil {
		return nil, errors.Join(err, errors.New("was PARLEY_SECRET_KEY changed?"))
	}
	return webhook.SecretKey(string(plain))
}

// checkWebhookURL accepts an absolute http(s) URL without credentials in
// it; with an outbound policy set, its destination must be allowed now
// too (every delivery checks again as it dials).
func (w Webhooks) checkWebhookURL(ctx context.Context, ps *problems, raw string) {
	s := w.svc
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		ps.add("/url", "is required")
	case len(raw) > MaxWebhookURL:
		ps.add("/url", "must be at most %d characters", MaxWebhookURL)
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		ps.add("/url", "must be an absolute http or https URL")
	case u.User != nil:
		ps.add("/url", "must not hold credentials; receivers verify the webhook-signature header instead")
	case s.opts.OutboundPolicy != nil:
		if err := outbound.CheckURL(ctx, *s.opts.OutboundPolicy, outbound.Options{}, raw); err != nil {
			ps.add("/url", "%s", outboundProblem(err))
		}
	}
}

// outboundProblem says why the outbound policy refuses a destination, for
// the one who saved it: the reason and the setting that would allow it,
// never the URL's query or credentials.
func outboundProblem(err error) string {
	return strings.TrimPrefix(outbound.CleanError(err).Error(), "outbound: ")
}

func checkDescription(ps *problems, d string) {
	if len(d) > MaxWebhookDescription {
		ps.add("/description", "must be at most %d bytes", MaxWebhookDescription)
	}
}

func checkEvents(ps *problems, events []string) {
	if len(events) == 0 {
		ps.add("/events", "must name at least one event type, or \"*\" for all; types: %s", strings.Join(webhook.Types, ", "))
	}
	for i, e := range events {
		if !webhook.Known(e) {
			ps.add(fmt.Sprintf("/events/%d", i), "%q is not an event type; types: %s", e, strings.Join(webhook.Types, ", "))
		}
	}
}

// webhookBot resolves the optional bot filter to the bot's id.
func (w Webhooks) webhookBot(ctx context.Context, ps *problems, tenantID, bot string) string {
	s := w.svc
	if bot == "" {
		return ""
	}
	b, err := s.store.Tenant(tenantID).Bots().Get(ctx, bot)
	if err != nil {
		ps.add("/bot", "is not a bot of this tenant")
		return ""
	}
	return b.ID
}

// List lists the tenant's endpoints, oldest first.
func (w Webhooks) List(ctx context.Context, p *Principal, tenant string) ([]Webhook, error) {
	s := w.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjWebhooks, auth.ActRead)
	if err != nil {
		return nil, err
	}
	rows, err := s.store.Tenant(t.ID).Webhooks().List(ctx)
	if err != nil {
		return nil, s.internal(ctx, "list webhooks", err)
	}
	return mapSlice(rows, webhookView), nil
}

// webhookFor resolves the tenant with a permission check, then its
// endpoint (by id or name).
func (w Webhooks) webhookFor(ctx context.Context, p *Principal, tenant, id, action string) (*store.WebhookEndpoint, error) {
	s := w.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjWebhooks, action)
	if err != nil {
		return nil, err
	}
	e, err := s.store.Tenant(t.ID).Webhooks().Get(ctx, id)
	if err != nil {
		return nil, s.storeErr(ctx, "get webhook", "webhook", "", err)
	}
	return e, nil
}

// Get returns one endpoint.
func (w Webhooks) Get(ctx context.Context, p *Principal, tenant, id string) (Webhook, error) {
	s := w.svc
	e, err := s.Webhooks().webhookFor(ctx, p, tenant, id, auth.ActRead)
	if err != nil {
		return Webhook{}, err
	}
	return webhookView(e), nil
}

// Update changes an endpoint. Enabling it clears why it was
// disabled and its failing streak.
func (w Webhooks) Update(ctx context.Context, p *Principal, tenant, id string, in WebhookPatch) (Webhook, error) {
	s := w.svc
	e, err := s.Webhooks().webhookFor(ctx, p, tenant, id, auth.ActWrite)
	if err != nil {
		return Webhook{}, err
	}
	var ps problems
	fields := map[string]any{}
	if in.URL != nil {
		s.Webhooks().checkWebhookURL(ctx, &ps, *in.URL)
		fields["url"] = *in.URL
	}
	if in.Description != nil {
		checkDescription(&ps, *in.Description)
		fields["description"] = *in.Description
	}
	if in.Events != nil {
		checkEvents(&ps, *in.Events)
		events, _ := json.Marshal(*in.Events)
		fields["events"] = string(events)
	}
	if in.Bot != nil {
		fields["bot_id"] = s.Webhooks().webhookBot(ctx, &ps, e.TenantID, *in.Bot)
	}
	if in.Enabled != nil {
		fields["enabled"] = *in.Enabled
		if *in.Enabled {
			fields["disabled_reason"], fields["failing_since"] = "", nil
		} else {
			fields["disabled_reason"] = "disabled by " + p.Actor()
		}
	}
	if err := ps.err(); err != nil {
		return Webhook{}, err
	}
	if len(fields) > 0 {
		err := s.AuditLog().audited(ctx, p, e.TenantID, func(tx *store.Store) (auditRecord, error) {
			changed := map[string]any{}
			for k, v := range fields {
				if k != "disabled_reason" && k != "failing_since" {
					changed[k] = v
				}
			}
			return auditRecord{action: AuditWebhookUpdated, target: e.ID, detail: changed},
				tx.Tenant(e.TenantID).Webhooks().Update(ctx, e.ID, fields)
		})
		if err != nil {
			return Webhook{}, s.storeErr(ctx, "update webhook", "webhook", "", err)
		}
		s.hooks.drop(e.TenantID)
	}
	e, err = s.store.Tenant(e.TenantID).Webhooks().Get(ctx, e.ID)
	if err != nil {
		return Webhook{}, s.storeErr(ctx, "get webhook", "webhook", "", err)
	}
	return webhookView(e), nil
}

// Delete removes an endpoint, its deliveries and their log.
func (w Webhooks) Delete(ctx context.Context, p *Principal, tenant, id string) error {
	s := w.svc
	e, err := s.Webhooks().webhookFor(ctx, p, tenant, id, auth.ActWrite)
	if err != nil {
		return err
	}
	err = s.AuditLog().audited(ctx, p, e.TenantID, func(tx *store.Store) (auditRecord, error) {
		return auditRecord{action: AuditWebhookDeleted, target: e.ID, detail: webhookDetail(e)}, tx.Tenant(e.TenantID).Webhooks().Delete(ctx, e.ID)
	})
	if err != nil {
		return s.storeErr(ctx, "delete webhook", "webhook", "", err)
	}
	s.hooks.drop(e.TenantID)
	return nil
}

// RotateSecret gives the endpoint a new secret (secret, or a
// generated one when empty) and keeps the current one signing for
// RotationOverlap, so both signatures go out until the receiver switched.
func (w Webhooks) RotateSecret(ctx context.Context, p *Principal, tenant, id, secret string) (CreatedWebhook, error) {
	s := w.svc
	e, err := s.Webhooks().webhookFor(ctx, p, tenant, id, auth.ActWrite)
	if err != nil {
		return CreatedWebhook{}, err
	}
	if secret == "" {
		if secret, err = webhook.NewSecret(); err != nil {
			return CreatedWebhook{}, s.internal(ctx, "webhook secret", err)
		}
	} else if _, err := webhook.SecretKey(secret); err != nil {
		return CreatedWebhook{}, Invalid(Detail{Pointer: "/secret", Message: err.Error()})
	}
	nonce, cipher, err := s.Webhooks().sealWebhookSecret(e.TenantID, e.ID, secret)
	if err != nil {
		return CreatedWebhook{}, s.internal(ctx, "seal webhook secret", err)
	}
	expires := s.now().Add(RotationOverlap)
	err = s.AuditLog().audited(ctx, p, e.TenantID, func(tx *store.Store) (auditRecord, error) {
		return auditRecord{action: AuditWebhookRotated, target: e.ID}, tx.Tenant(e.TenantID).Webhooks().Update(ctx, e.ID, map[string]any{
			"secret_nonce": nonce, "secret_cipher": cipher,
			"prev_nonce": e.SecretNonce, "prev_cipher": e.SecretCipher, "prev_expires_at": expires})
	})
	if err != nil {
		return CreatedWebhook{}, s.storeErr(ctx, "rotate webhook secret", "webhook", "", err)
	}
	e.PrevExpiresAt, e.UpdatedAt = &expires, s.now()
	return CreatedWebhook{Webhook: webhookView(e), Secret: secret}, nil
}

// SecretIs reports whether secret is the endpoint's current one,
// for parley apply, which keeps a secret that did not change.
func (w Webhooks) SecretIs(ctx context.Context, p *Principal, tenant, id, secret string) (bool, error) {
	s := w.svc
	e, err := s.Webhooks().webhookFor(ctx, p, tenant, id, auth.ActWrite)
	if err != nil {
		return false, err
	}
	key, err := s.Webhooks().openWebhookSecret(e.TenantID, e.ID, e.SecretNonce, e.SecretCipher)
	if err != nil {
		return false, s.internal(ctx, "open webhook secret", err)
	}
	want, err := webhook.SecretKey(secret)
	return err == nil && slices.Equal(key, want), nil
}

// Test sends the endpoint a webhook.test event through the
// outbox, like any other, and returns its delivery.
func (w Webhooks) Test(ctx context.Context, p *Principal, tenant, id string) (WebhookDelivery, error) {
	s := w.svc
	e, err := s.Webhooks().webhookFor(ctx, p, tenant, id, auth.ActWrite)
	if err != nil {
		return WebhookDelivery{}, err
	}
	t, err := s.store.Tenants().Get(ctx, e.TenantID)
	if err != nil {
		return WebhookDelivery{}, s.internal(ctx, "test webhook: tenant", err)
	}
	ev := Event{TenantID: e.TenantID, Type: webhook.Test}
	data := map[string]any{"webhook": e.ID, "message": "This is a test event from Parley."}
	if err := writeEvent(ctx, s.store, t.Slug, ev, data, []string{e.ID}, s.now()); err != nil {
		return WebhookDelivery{}, s.internal(ctx, "test webhook", err)
	}
	s.Webhooks().wakeDeliverer()
	rows, _, err := s.store.Tenant(e.TenantID).Webhooks().Deliveries(ctx, e.ID, store.Page{Limit: 1})
	if err != nil || len(rows) == 0 {
		return WebhookDelivery{}, s.internal(ctx, "test webhook: delivery", errors.Join(err, store.ErrNotFound))
	}
	return deliveryView(&rows[0], nil), nil
}

// ListDeliveries is the endpoint's delivery log, newest first.
func (w Webhooks) ListDeliveries(ctx context.Context, p *Principal, tenant, id string, opts ListOptions) ([]WebhookDelivery, string, error) {
	s := w.svc
	e, err := s.Webhooks().webhookFor(ctx, p, tenant, id, auth.ActRead)
	if err != nil {
		return nil, "", err
	}
	rows, next, err := s.store.Tenant(e.TenantID).Webhooks().Deliveries(ctx, e.ID, opts.page())
	if err != nil {
		return nil, "", s.storeErr(ctx, "list webhook deliveries", "delivery", "", err)
	}
	ids := make([]string, len(rows))
	for i := range rows {
		ids[i] = rows[i].ID
	}
	attempts, err := s.store.Tenant(e.TenantID).Webhooks().Attempts(ctx, ids)
	if err != nil {
		return nil, "", s.internal(ctx, "list webhook attempts", err)
	}
	byDelivery := map[string][]store.WebhookAttempt{}
	for _, a := range attempts {
		byDelivery[a.DeliveryID] = append(byDelivery[a.DeliveryID], a)
	}
	out := make([]WebhookDelivery, len(rows))
	for i := range rows {
		out[i] = deliveryView(&rows[i], byDelivery[rows[i].ID])
	}
	return out, next, nil
}

// ReplayDelivery sends a delivery again, from the first step of
// the schedule, whatever became of it.
func (w Webhooks) ReplayDelivery(ctx context.Context, p *Principal, tenant, id, delivery string) (WebhookDelivery, error) {
	s := w.svc
	e, err := s.Webhooks().webhookFor(ctx, p, tenant, id, auth.ActWrite)
	if err != nil {
		return WebhookDelivery{}, err
	}
	if err := s.store.Tenant(e.TenantID).Webhooks().Replay(ctx, e.ID, delivery); err != nil {
		return WebhookDelivery{}, s.storeErr(ctx, "replay webhook delivery", "delivery", "", err)
	}
	s.Webhooks().wakeDeliverer()
	d, err := s.store.Tenant(e.TenantID).Webhooks().Delivery(ctx, e.ID, delivery)
	if err != nil {
		return WebhookDelivery{}, s.storeErr(ctx, "get webhook delivery", "delivery", "", err)
	}
	return deliveryView(d, nil), nil
}

func deliveryView(d *store.WebhookDelivery, attempts []store.WebhookAttempt) WebhookDelivery {
	out := WebhookDelivery{ID: d.ID, EventID: d.EventID, EventType: d.EventType, Status: d.Status,
		LastStatus: d.LastStatus, LastError: d.LastError, DeliveredAt: d.DeliveredAt, CreatedAt: d.CreatedAt,
		Attempts: make([]WebhookAttempt, 0, len(attempts))}
	if d.Status == store.DeliveryPending {
		next := d.NextAttemptAt
		out.NextAttemptAt = &next
	}
	for _, a := range attempts {
		out.Attempts = append(out.Attempts, WebhookAttempt{Number: a.Number, Status: a.Status, DurationMS: a.DurationMS,
			Response: a.Excerpt, Error: a.Error, At: a.CreatedAt})
	}
	return out
}

// webhookDetail describes an endpoint in the audit log, without its secret.
func webhookDetail(e *store.WebhookEndpoint) map[string]any {
	return map[string]any{"name": e.Name, "url": e.URL, "events": json.RawMessage(e.Events), "bot_id": e.BotID, "enabled": e.Enabled}
}
