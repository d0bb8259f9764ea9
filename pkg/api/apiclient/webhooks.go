package apiclient

import (
	"context"
	"net/http"
	"time"
)

// Webhook is an outbound webhook endpoint; its secret is shown only when
// it is made (NewWebhook).
type Webhook struct {
	ID          string   `json:"id"`
	Name        string   `json:"name,omitempty"`
	URL         string   `json:"url"`
	Description string   `json:"description,omitempty"`
	Events      []string `json:"events"`
	// Bot limits the endpoint to one bot's events (its id); empty is all.
	Bot     string `json:"bot,omitempty"`
	Enabled bool   `json:"enabled"`
	// DisabledReason says why Parley disabled the endpoint (a 410, or
	// every delivery failing), or who did.
	DisabledReason          string     `json:"disabled_reason,omitempty"`
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at,omitempty"`
	FailingSince            *time.Time `json:"failing_since,omitempty"`
	CreatedAt               time.Time  `json:"created_at"`
	UpdatedAt               time.Time  `json:"updated_at"`
}

// NewWebhook is an endpoint with its whsec_ secret, shown this once.
type NewWebhook struct {
	Webhook
	Secret string `json:"secret"`
}

// CreateWebhookRequest is the body of POST /v1/tenants/{tenant}/webhooks.
type CreateWebhookRequest struct {
	URL         string   `json:"url"`
	Description string   `json:"description,omitempty"`
	Events      []string `json:"events"`
	Bot         string   `json:"bot,omitempty"`
	// Enabled defaults to true.
	Enabled *bool `json:"enabled,omitempty"`
	// Name is optional, unique in the tenant (parley apply sets it).
	Name string `json:"name,omitempty"`
	// Secret is a whsec_ secret of the caller's; empty generates one.
	Secret string `json:"secret,omitempty"`
}

// UpdateWebhookRequest is the body of PATCH /v1/tenants/{tenant}/webhooks/{id};
// fields left out stay as they are. Bot "" removes the bot filter.
type UpdateWebhookRequest struct {
	URL         *string   `json:"url,omitempty"`
	Description *string   `json:"description,omitempty"`
	Events      *[]string `json:"events,omitempty"`
	Bot         *string   `json:"bot,omitempty"`
	Enabled     *bool     `json:"enabled,omitempty"`
}

// RotateWebhookSecretRequest is the optional body of POST .../rotate-secret.
type RotateWebhookSecretRequest struct {
	// Secret is the new whsec_ secret; empty generates one.
	Secret string `json:"secret,omitempty"`
}

// WebhookList is the body of GET /v1/tenants/{tenant}/webhooks.
type WebhookList struct {
	Webhooks []Webhook `json:"webhooks"`
}

// WebhookDelivery is one event's delivery to one endpoint.
type WebhookDelivery struct {
	ID        string `json:"id"`
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
	// Status is pending, succeeded or failed.
	Status        string           `json:"status"`
	Attempts      []WebhookAttempt `json:"attempts"`
	NextAttemptAt *time.Time       `json:"next_attempt_at,omitempty"`
	LastStatus    int              `json:"last_status,omitempty"`
	LastError     string           `json:"last_error,omitempty"`
	DeliveredAt   *time.Time       `json:"delivered_at,omitempty"`
	CreatedAt     time.Time        `json:"created_at"`
}

// WebhookAttempt is one HTTP attempt of a delivery.
type WebhookAttempt struct {
	Number     int       `json:"number"`
	Status     int       `json:"status"`
	DurationMS int64     `json:"duration_ms"`
	Response   string    `json:"response,omitempty"`
	Error      string    `json:"error,omitempty"`
	At         time.Time `json:"at"`
}

// WebhookDeliveryList is the body of GET .../webhooks/{id}/deliveries.
type WebhookDeliveryList struct {
	Deliveries []WebhookDelivery `json:"deliveries"`
	NextCursor string            `json:"next_cursor,omitempty"`
}

// CreateWebhook adds an endpoint; its secret is in the answer only.
func (c *Client) CreateWebhook(ctx context.Context, tenant string, req CreateWebhookRequest) (*NewWebhook, error) {
	var out NewWebhook
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "webhooks"), req, &out)
}

// ListWebhooks lists a tenant's endpoints.
func (c *Client) ListWebhooks(ctx context.Context, tenant string) (*WebhookList, error) {
	var out WebhookList
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "webhooks"), nil, &out)
}

// GetWebhook returns one endpoint.
func (c *Client) GetWebhook(ctx context.Context, tenant, id string) (*Webhook, error) {
	var out Webhook
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "webhooks", id), nil, &out)
}

// UpdateWebhook changes an endpoint.
func (c *Client) UpdateWebhook(ctx context.Context, tenant, id string, req UpdateWebhookRequest) (*Webhook, error) {
	var out Webhook
	return &out, c.Do(ctx, http.MethodPatch, tenantPath(tenant, "webhooks", id), req, &out)
}

// DeleteWebhook removes an endpoint and its delivery log.
func (c *Client) DeleteWebhook(ctx context.Context, tenant, id string) error {
	return c.Do(ctx, http.MethodDelete, tenantPath(tenant, "webhooks", id), nil, nil)
}

// RotateWebhookSecret gives an endpoint a new secret; the old one keeps
// signing beside it for a day.
func (c *Client) RotateWebhookSecret(ctx context.Context, tenant, id, secret string) (*NewWebhook, error) {
	var out NewWebhook
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "webhooks", id, "rotate-secret"),
		RotateWebhookSecretRequest{Secret: secret}, &out)
}

// TestWebhook sends an endpoint a webhook.test event.
func (c *Client) TestWebhook(ctx context.Context, tenant, id string) (*WebhookDelivery, error) {
	var out WebhookDelivery
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "webhooks", id, "test"), nil, &out)
}

// ListWebhookDeliveries reads an endpoint's delivery log, newest first.
func (c *Client) ListWebhookDeliveries(ctx context.Context, tenant, id, cursor string) (*WebhookDeliveryList, error) {
	var out WebhookDeliveryList
	return &out, c.Do(ctx, http.MethodGet, withCursor(tenantPath(tenant, "webhooks", id, "deliveries"), cursor), nil, &out)
}

// ReplayWebhookDelivery sends a delivery again.
func (c *Client) ReplayWebhookDelivery(ctx context.Context, tenant, id, delivery string) (*WebhookDelivery, error) {
	var out WebhookDelivery
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "webhooks", id, "deliveries", delivery, "replay"), nil, &out)
}
