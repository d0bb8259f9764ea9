package store

import (
	"context"
	"time"

	"gorm.io/gorm/clause"
)

// Secrets are a tenant's sealed secrets: reach them with Store.Tenant(id).Secrets().
type Secrets struct{ scope }

// Secret is a tenant's named secret, sealed by the caller (pkg/auth.Sealer)
// before it reaches the store: the database only ever sees ciphertext.
type Secret struct {
	TenantID   string `gorm:"primaryKey"`
	Name       string `gorm:"primaryKey"`
	Nonce      []byte
	Ciphertext []byte
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Put creates or replaces the tenant's secret named sec.Name in one
// statement (an upsert), so two concurrent puts cannot collide.
func (se Secrets) Put(ctx context.Context, sec *Secret) error {
	s := se.s
	sec.TenantID = se.tenant
	now := s.db.NowFunc()
	sec.CreatedAt, sec.UpdatedAt = now, now
	err := s.q(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "tenant_id"}, {Name: "name"}},
		DoUpdates: clause.AssignmentColumns([]string{"nonce", "ciphertext", "updated_at"}),
	}).Create(sec).Error
	return wrap("put secret", err)
}

// List returns all of the tenant's sealed secrets, by name.
func (se Secrets) List(ctx context.Context) ([]Secret, error) {
	s, tenantID := se.s, se.tenant
	var rows []Secret
	if err := s.q(ctx).Where("tenant_id = ?", tenantID).Order("name").Find(&rows).Error; err != nil {
		return nil, wrap("list secrets", err)
	}
	return rows, nil
}

// Get returns the tenant's sealed secrets with these names, by
// name; names the tenant has no secret for are left out.
func (se Secrets) Get(ctx context.Context, names []string) ([]Secret, error) {
	s, tenantID := se.s, se.tenant
	var rows []Secret
	if err := s.q(ctx).Where("tenant_id = ? AND name IN ?", tenantID, names).Order("name").Find(&rows).Error; err != nil {
		return nil, wrap("get secrets", err)
	}
	return rows, nil
}

// Delete removes the tenant's secret; an unknown name is ErrNotFound.
func (se Secrets) Delete(ctx context.Context, name string) error {
	s, tenantID := se.s, se.tenant
	res := s.q(ctx).Where("tenant_id = ? AND name = ?", tenantID, name).Delete(&Secret{})
	if res.Error != nil {
		return wrap("delete secret", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("delete secret", ErrNotFound)
	}
	return nil
}
