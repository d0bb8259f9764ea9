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

// PutSecret creates or replaces the tenant's secret named sec.Name in one
// statement (an upsert), so two concurrent puts cannot collide.
func (s *Store) PutSecret(ctx context.Context, sec *Secret) error {
	now := s.db.NowFunc()
	sec.CreatedAt, sec.UpdatedAt = now, now
	err := s.q(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "tenant_id"}, {Name: "name"}},
		DoUpdates: clause.AssignmentColumns([]string{"nonce", "ciphertext", "updated_at"}),
	}).Create(sec).Error
	return wrap("put secret", err)
}

// ListSecrets returns all of the tenant's sealed secrets, by name.
func (s *Store) ListSecrets(ctx context.Context, tenantID string) ([]Secret, error) {
	var rows []Secret
	if err := s.q(ctx).Where("tenant_id = ?", tenantID).Order("name").Find(&rows).Error; err != nil {
		return nil, wrap("list secrets", err)
	}
	return rows, nil
}

// GetSecrets returns the tenant's sealed secrets with these names, by
// name; names the tenant has no secret for are left out.
func (s *Store) GetSecrets(ctx context.Context, tenantID string, names []string) ([]Secret, error) {
	var rows []Secret
	if err := s.q(ctx).Where("tenant_id = ? AND name IN ?", tenantID, names).Order("name").Find(&rows).Error; err != nil {
		return nil, wrap("get secrets", err)
	}
	return rows, nil
}

// DeleteSecret removes the tenant's secret; an unknown name is ErrNotFound.
func (s *Store) DeleteSecret(ctx context.Context, tenantID, name string) error {
	res := s.q(ctx).Where("tenant_id = ? AND name = ?", tenantID, name).Delete(&Secret{})
	if res.Error != nil {
		return wrap("delete secret", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("delete secret", ErrNotFound)
	}
	return nil
}
