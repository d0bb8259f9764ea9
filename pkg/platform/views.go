package platform

import (
	"encoding/json"
	"time"

	"github.com/parleyhq/parley/pkg/store"
)

// ListOptions asks for one page of a list.
type ListOptions struct {
	// Cursor is the NextCursor of the previous page; empty for the first.
	Cursor string
	// Limit caps the page size (default 50, at most 200).
	Limit int
}

func (o ListOptions) page() store.Page { return store.Page{Cursor: o.Cursor, Limit: o.Limit} }

// Tenant is a tenant as callers see it.
type Tenant struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
	Name string `json:"name"`
	// RetentionDays: dialogs are deleted that many days after their last
	// activity; 0 keeps them.
	RetentionDays int       `json:"retention_days"`
	CreatedAt     time.Time `json:"created_at"`
}

func tenantView(t *store.Tenant) Tenant {
	return Tenant{ID: t.ID, Slug: t.Slug, Name: t.Name, RetentionDays: t.RetentionDays, CreatedAt: t.CreatedAt}
}

// APIKey is a key's record; the key itself is only in CreatedKey, once.
type APIKey struct {
	ID         string     `json:"id"`
	TenantID   string     `json:"tenant_id"`
	Name       string     `json:"name"`
	Kind       string     `json:"kind"`
	Scopes     []string   `json:"scopes"`
	BotID      string     `json:"bot_id,omitempty"`
	Origins    []string   `json:"origins,omitempty"`
	Prefix     string     `json:"prefix"`
	Last4      string     `json:"last4"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
}

func keyView(k *store.APIKey) APIKey {
	v := APIKey{
		ID: k.ID, TenantID: k.TenantID, Name: k.Name, Kind: k.Kind,
		Scopes: nonNil(k.Scopes), Origins: k.Origins, Prefix: k.Prefix, Last4: k.Last4,
		ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt, LastUsedAt: k.LastUsedAt, CreatedAt: k.CreatedAt,
	}
	if k.BotID != nil {
		v.BotID = *k.BotID
	}
	return v
}

// CreatedKey is a new key: its record plus the plaintext, which is shown
// this once and cannot be recovered later.
type CreatedKey struct {
	APIKey
	Key string `json:"key"`
}

// SecretInfo describes a secret without its value.
type SecretInfo struct {
	Name      string    `json:"name"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Bot is a bot as callers see it.
type Bot struct {
	ID       string `json:"id"`
	TenantID string `json:"tenant_id"`
	Slug     string `json:"slug"`
	Name     string `json:"name"`
	// PublishedVersion is the live version's number; 0 means none.
	PublishedVersion int `json:"published_version"`
	// RequirePassingTests refuses to publish a version whose tests fail.
	RequirePassingTests bool `json:"require_passing_tests"`
	// CanaryVersion, when not 0, takes CanaryPercent of new dialogs.
	CanaryVersion int       `json:"canary_version,omitempty"`
	CanaryPercent int       `json:"canary_percent,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

func botView(b *store.Bot) Bot {
	return Bot{ID: b.ID, TenantID: b.TenantID, Slug: b.Slug, Name: b.Name,
		PublishedVersion: b.PublishedVersion, RequirePassingTests: b.RequirePassingTests,
		CanaryVersion: b.CanaryVersion, CanaryPercent: b.CanaryPercent, CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt}
}

// Version is one immutable, numbered config of a bot.
type Version struct {
	ID     string          `json:"id"`
	BotID  string          `json:"bot_id"`
	Number int             `json:"number"`
	Config json.RawMessage `json:"config"`
	// Tests is the version's conversation test file; nil when it has none.
	Tests       json.RawMessage `json:"tests,omitempty"`
	Prompt      string          `json:"prompt"`
	Fingerprint string          `json:"fingerprint"`
	CreatedBy   string          `json:"created_by"`
	CreatedAt   time.Time       `json:"created_at"`
}

func versionView(v *store.BotVersion) Version {
	var tests json.RawMessage
	if v.Tests != "" {
		tests = json.RawMessage(v.Tests)
	}
	return Version{ID: v.ID, BotID: v.BotID, Number: v.Number, Config: json.RawMessage(v.Config), Tests: tests,
		Prompt: v.Prompt, Fingerprint: v.Fingerprint, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt}
}

// User is an admin UI user, without the password hash.
type User struct {
	ID        string    `json:"id"`
	Email     string    `json:"email"`
	CreatedAt time.Time `json:"created_at"`
}

func userView(u *store.User) User { return User{ID: u.ID, Email: u.Email, CreatedAt: u.CreatedAt} }

// Member is a user's role in a tenant.
type Member struct {
	UserID string `json:"user_id"`
	Email  string `json:"email"`
	Role   string `json:"role"`
}

func mapSlice[S, T any](in []S, f func(*S) T) []T {
	out := make([]T, len(in))
	for i := range in {
		out[i] = f(&in[i])
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
