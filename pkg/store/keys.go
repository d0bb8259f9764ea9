package store

import (
	"context"
	"time"
)

// Keys are a tenant's API keys: reach them with Store.Tenant(id).Keys().
type Keys struct{ scope }

// KeyAuth finds a key of any tenant by its hash, for authentication, which
// learns the tenant from the key: Store.KeyAuth(). Cross-tenant.
type KeyAuth struct{ s *Store }

// APIKey is a tenant's API key. A server key's plaintext is never stored:
// Hash is its SHA-256, Prefix and Last4 let people recognise it in a list.
type APIKey struct {
	ID       string `gorm:"primaryKey"`
	TenantID string
	Name     string
	// Kind is "sk" (server) or "pk" (publishable, for the widget).
	Kind    string
	Scopes  StringList
	BotID   *string
	Origins StringList
	Hash    string
	Prefix  string
	Last4   string
	// Publishable is the whole key of a pk key, which is public by design
	// (it sits in the pages of the site it serves), so it can be shown
	// again. Always empty for an sk key.
	Publishable string

	ExpiresAt  *time.Time
	RevokedAt  *time.Time
	LastUsedAt *time.Time
	CreatedAt  time.Time
}

// TableName pins the table the migrations created, independent of how gorm
// splits the "API" initialism.
func (APIKey) TableName() string { return "api_keys" }

// Create inserts k, giving it an id when it has none.
func (ke Keys) Create(ctx context.Context, k *APIKey) error {
	s := ke.s
	k.TenantID = ke.tenant
	if k.ID == "" {
		k.ID = NewID(PrefixKey)
	}
	return wrap("create api key", s.q(ctx).Create(k).Error)
}

// ByHash finds a key by the hash of its plaintext, for
// authentication. It is not tenant-scoped because the key itself names its
// tenant; callers must still check expiry and revocation (ActiveAt).
//
// A key read once is remembered, for a minute at most, while the store
// hears every revocation: on PostgreSQL through keyListener, so a
// revocation by any process sharing the database reaches the others as it
// commits; on SQLite when the store holds the server lock (Config.Server),
// so every revocation is its own.
func (ke KeyAuth) ByHash(ctx context.Context, hash string) (*APIKey, error) {
	s := ke.s
	now := time.Now()
	if k, ok := s.keys.get(hash, now); ok {
		return k, nil
	}
	if s.listener != nil {
		s.listener.start()
	}
	gen := s.keys.generation()
	var k APIKey
	if err := s.q(ctx).Where("hash = ?", hash).First(&k).Error; err != nil {
		return nil, wrap("get api key by hash", err)
	}
	s.keys.put(&k, gen, now)
	return &k, nil
}

// ActiveAt reports whether the key may be used at now: not revoked and not
// expired.
func (k *APIKey) ActiveAt(now time.Time) bool {
	return k.RevokedAt == nil && (k.ExpiresAt == nil || now.Before(*k.ExpiresAt))
}

// Get finds one of the tenant's keys by id.
func (ke Keys) Get(ctx context.Context, id string) (*APIKey, error) {
	s, tenantID := ke.s, ke.tenant
	var k APIKey
	if err := s.q(ctx).Where("tenant_id = ? AND id = ?", tenantID, id).First(&k).Error; err != nil {
		return nil, wrap("get api key", err)
	}
	return &k, nil
}

// List returns one page of the tenant's keys, revoked ones included,
// oldest first.
func (ke Keys) List(ctx context.Context, p Page) ([]APIKey, string, error) {
	s, tenantID := ke.s, ke.tenant
	var rows []APIKey
	if err := paged(s.q(ctx).Where("tenant_id = ?", tenantID), "id", p).Find(&rows).Error; err != nil {
		return nil, "", wrap("list api keys", err)
	}
	rows, next := nextCursor(rows, p, func(k APIKey) string { return k.ID })
	return rows, next, nil
}

// Revoke marks the tenant's key revoked at now. Revoking twice keeps
// the first time. An unknown id, or another tenant's, is ErrNotFound.
func (ke Keys) Revoke(ctx context.Context, id string, now time.Time) (*APIKey, error) {
	s, tenantID := ke.s, ke.tenant
	k, err := ke.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if k.RevokedAt != nil {
		return k, nil
	}
	err = s.Tx(ctx, func(tx *Store) error {
		err := tx.q(ctx).Model(&APIKey{}).Where("tenant_id = ? AND id = ?", tenantID, id).
			Update("revoked_at", now).Error
		if err != nil || tx.dialect != DialectPostgres {
			return err
		}
		// Delivered as the revocation commits, to every process's listener.
		return tx.q(ctx).Exec("SELECT pg_notify(?, ?)", revocationChannel, id).Error
	})
	if err != nil {
		return nil, wrap("revoke api key", err)
	}
	// In a caller's transaction this forgets the key before it commits; a
	// read in between is forgotten again by the NOTIFY on PostgreSQL, and
	// cannot happen on SQLite, whose one connection the transaction holds.
	s.keys.drop(id)
	k.RevokedAt = &now
	return k, nil
}

// SetOrigins replaces the allowed origins of the tenant's key. Like
// a revocation, the change reaches every process's key cache as it
// commits, so the old origins stop working at once. An unknown id, or
// another tenant's, is ErrNotFound.
func (ke Keys) SetOrigins(ctx context.Context, id string, origins StringList) (*APIKey, error) {
	s, tenantID := ke.s, ke.tenant
	err := s.Tx(ctx, func(tx *Store) error {
		res := tx.q(ctx).Model(&APIKey{}).Where("tenant_id = ? AND id = ?", tenantID, id).Update("origins", origins)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		if tx.dialect != DialectPostgres {
			return nil
		}
		return tx.q(ctx).Exec("SELECT pg_notify(?, ?)", revocationChannel, id).Error
	})
	if err != nil {
		return nil, wrap("set api key origins", err)
	}
	s.keys.drop(id)
	return ke.Get(ctx, id)
}

// Touch records that the key was used. It is best-effort bookkeeping:
// callers may ignore its error.
func (ke KeyAuth) Touch(ctx context.Context, id string, now time.Time) error {
	s := ke.s
	err := s.q(ctx).Model(&APIKey{}).Where("id = ?", id).Update("last_used_at", now).Error
	if err != nil {
		return wrap("touch api key", err)
	}
	s.keys.touched(id, now)
	return nil
}
