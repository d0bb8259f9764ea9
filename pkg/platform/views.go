package platform

import (
	"encoding/json"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
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

// Tenant is a tenant as callers see it, in its wire form.
type Tenant = apiclient.Tenant

func tenantView(t *store.Tenant) Tenant {
	return Tenant{ID: t.ID, Slug: t.Slug, Name: t.Name, RetentionDays: t.RetentionDays, IdleMinutes: t.IdleMinutes,
		RequireTwoFactor: t.RequireTwoFactor, CreatedAt: t.CreatedAt}
}

// APIKey is a key's record. A server key itself is only in CreatedKey,
// once; a publishable key's is in Publishable, since it is public anyway.
type APIKey struct {
	ID       string
	TenantID string
	Name     string
	Kind     string
	Scopes   []string
	BotID    string
	Origins  []string
	Prefix   string
	Last4    string
	// Publishable is the whole key of a pk key (empty for sk keys, and for
	// pk keys made before their value was kept).
	Publishable string
	ExpiresAt   *time.Time
	RevokedAt   *time.Time
	LastUsedAt  *time.Time
	CreatedAt   time.Time
}

func keyView(k *store.APIKey) APIKey {
	v := APIKey{
		ID: k.ID, TenantID: k.TenantID, Name: k.Name, Kind: k.Kind,
		Scopes: nonNil(k.Scopes), Origins: k.Origins, Prefix: k.Prefix, Last4: k.Last4, Publishable: k.Publishable,
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
	Key string
}

// Bot is a bot as callers see it: its store row, which holds nothing
// secret and nothing the platform would add to.
type Bot = store.Bot

// Version is one immutable, numbered config of a bot.
type Version struct {
	ID     string
	BotID  string
	Number int
	Config json.RawMessage
	// Tests is the version's conversation test file; nil when it has none.
	Tests       json.RawMessage
	Prompt      string
	Fingerprint string
	CreatedBy   string
	CreatedAt   time.Time
	// Warnings are set only by saving: what the config asks that may not
	// work but does not stop the save (a model its provider does not
	// list), each with a pointer into the config.
	Warnings []Detail
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
	ID        string
	Email     string
	CreatedAt time.Time
}

func userView(u *store.User) User { return User{ID: u.ID, Email: u.Email, CreatedAt: u.CreatedAt} }

// Member is a user's role in a tenant, with the user's email, in its
// wire form. Pending says the user was invited and has not set a
// password yet.
type Member = apiclient.Member

// mapSlice converts each of in. Its result is never nil, so a list the
// API answers with it is [] when empty, never null.
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
