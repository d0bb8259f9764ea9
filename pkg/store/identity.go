package store

import (
	"context"
	"time"

	"gorm.io/gorm/clause"
)

// Identity is how a tenant's signed end-user tokens are verified: reach it
// with Store.Tenant(id).Identity().
type Identity struct{ scope }

// TenantIdentity is how a tenant's signed end-user tokens are verified:
// an HS256 secret sealed by the caller (Nonce, Ciphertext) or a JWKS URL,
// and the audience tokens must name ("" checks none).
type TenantIdentity struct {
	TenantID   string `gorm:"primaryKey"`
	Nonce      []byte
	Ciphertext []byte
	JWKSURL    string `gorm:"column:jwks_url"`
	Audience   string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Put creates or replaces the tenant's identity settings.
func (i Identity) Put(ctx context.Context, ti *TenantIdentity) error {
	s := i.s
	ti.TenantID = i.tenant
	now := s.db.NowFunc()
	ti.CreatedAt, ti.UpdatedAt = now, now
	err := s.q(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "tenant_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"nonce", "ciphertext", "jwks_url", "audience", "updated_at"}),
	}).Create(ti).Error
	return wrap("put tenant identity", err)
}

// Get returns the tenant's identity settings; ErrNotFound
// when it has none.
func (i Identity) Get(ctx context.Context) (TenantIdentity, error) {
	s, tenantID := i.s, i.tenant
	var ti TenantIdentity
	err := s.q(ctx).Where("tenant_id = ?", tenantID).Take(&ti).Error
	return ti, wrap("get tenant identity", err)
}

// Delete removes the tenant's identity settings; none is
// ErrNotFound.
func (i Identity) Delete(ctx context.Context) error {
	s, tenantID := i.s, i.tenant
	res := s.q(ctx).Where("tenant_id = ?", tenantID).Delete(&TenantIdentity{})
	if res.Error != nil {
		return wrap("delete tenant identity", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("delete tenant identity", ErrNotFound)
	}
	return nil
}
