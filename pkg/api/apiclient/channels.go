package apiclient

import (
	"context"
	"net/http"
	"time"
)

// Channel is an inbound channel: where a platform (the tenant's backend,
// Telegram, Slack) sends user messages for one bot. Its secret is shown
// only when it is made (NewChannel).
type Channel struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	// Kind is webhook, telegram or slack.
	Kind string `json:"kind"`
	// Bot is the id of the bot that answers.
	Bot     string `json:"bot"`
	Enabled bool   `json:"enabled"`
	// Secrets names the tenant secrets the channel uses, by role:
	// bot_token (telegram, slack), signing_secret (slack).
	Secrets map[string]string `json:"secrets"`
	// BotUserID is a Slack bot's own user id, whose messages are ignored.
	BotUserID string `json:"bot_user_id,omitempty"`
	// InboundURL is where the platform sends messages.
	InboundURL string `json:"inbound_url"`
	// PreviousSecretExpiresAt is set after a rotation, while the previous
	// secret is still accepted.
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at,omitempty"`
	CreatedAt               time.Time  `json:"created_at"`
	UpdatedAt               time.Time  `json:"updated_at"`
}

// NewChannel is a channel with the secret Parley made for it, shown this
// once: a webhook channel's whsec_ signing secret, a Telegram channel's
// secret token (setWebhook's secret_token); none for Slack.
type NewChannel struct {
	Channel
	Secret string `json:"secret,omitempty"`
}

// CreateChannelRequest is the body of POST /v1/tenants/{tenant}/channels.
type CreateChannelRequest struct {
	Kind string `json:"kind"`
	// Bot is the bot's slug or id.
	Bot  string `json:"bot"`
	Name string `json:"name,omitempty"`
	// Enabled defaults to true.
	Enabled   *bool             `json:"enabled,omitempty"`
	Secrets   map[string]string `json:"secrets,omitempty"`
	BotUserID string            `json:"bot_user_id,omitempty"`
	// Secret is a whsec_ secret of the caller's for a webhook channel
	// (parley apply); empty generates one.
	Secret string `json:"secret,omitempty"`
}

// UpdateChannelRequest is the body of PATCH /v1/tenants/{tenant}/channels/{id};
// fields left out stay as they are.
type UpdateChannelRequest struct {
	Bot       *string            `json:"bot,omitempty"`
	Enabled   *bool              `json:"enabled,omitempty"`
	Secrets   *map[string]string `json:"secrets,omitempty"`
	BotUserID *string            `json:"bot_user_id,omitempty"`
}

// SetTelegramWebhookRequest is the optional body of POST
// .../channels/{id}/telegram/set-webhook.
type SetTelegramWebhookRequest struct {
	// URL overrides the channel's inbound URL (a proxy in front of Parley).
	URL string `json:"url,omitempty"`
}

// SetTelegramWebhookResult says where Telegram now sends the bot's updates.
type SetTelegramWebhookResult struct {
	URL string `json:"url"`
}

// ChannelList is the body of GET /v1/tenants/{tenant}/channels.
type ChannelList struct {
	Channels []Channel `json:"channels"`
}

// CreateChannel adds a channel; the answer holds its secret, once.
func (c *Client) CreateChannel(ctx context.Context, tenant string, req CreateChannelRequest) (*NewChannel, error) {
	var out NewChannel
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "channels"), req, &out)
}

// ListChannels lists a tenant's channels.
func (c *Client) ListChannels(ctx context.Context, tenant string) (*ChannelList, error) {
	var out ChannelList
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "channels"), nil, &out)
}

// GetChannel returns one channel.
func (c *Client) GetChannel(ctx context.Context, tenant, id string) (*Channel, error) {
	var out Channel
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "channels", id), nil, &out)
}

// UpdateChannel changes a channel.
func (c *Client) UpdateChannel(ctx context.Context, tenant, id string, req UpdateChannelRequest) (*Channel, error) {
	var out Channel
	return &out, c.Do(ctx, http.MethodPatch, tenantPath(tenant, "channels", id), req, &out)
}

// DeleteChannel removes a channel; its dialogs stay.
func (c *Client) DeleteChannel(ctx context.Context, tenant, id string) error {
	return c.Do(ctx, http.MethodDelete, tenantPath(tenant, "channels", id), nil, nil)
}

// SetTelegramWebhook calls Telegram's setWebhook for a telegram channel.
func (c *Client) SetTelegramWebhook(ctx context.Context, tenant, id string, req SetTelegramWebhookRequest) (*SetTelegramWebhookResult, error) {
	var out SetTelegramWebhookResult
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "channels", id, "telegram", "set-webhook"), req, &out)
}

// RotateChannelSecretRequest is the optional body of POST
// /v1/tenants/{tenant}/channels/{id}/rotate-secret: a webhook channel's
// new whsec_ secret (empty: generated), or a Slack channel's new signing
// secret (required); url is where a Telegram channel's setWebhook points
// (empty: its inbound_url).
type RotateChannelSecretRequest struct {
	Secret string `json:"secret,omitempty"`
	URL    string `json:"url,omitempty"`
}

// RotateChannelSecret gives the channel a new secret; the previous one is
// still accepted for a day.
func (c *Client) RotateChannelSecret(ctx context.Context, tenant, id string, req RotateChannelSecretRequest) (*NewChannel, error) {
	var out NewChannel
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "channels", id, "rotate-secret"), req, &out)
}
