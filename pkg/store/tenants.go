package store

import (
	"context"
	"time"
)

// Tenants are every tenant, for the platform operator and the retention
// sweep: Store.Tenants(). Cross-tenant.
type Tenants struct{ s *Store }

// Tenant is one customer of the platform; everything else belongs to one.
type Tenant struct {
	ID   string `gorm:"primaryKey"`
	Slug string
	Name string
	// RetentionDays deletes the tenant's dialogs that many days after
	// their last activity; 0 keeps them.
	RetentionDays int
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// CreateTenant inserts t, giving it an id when it has none. A taken slug is
// ErrConflict.
func (s *Store) CreateTenant(ctx context.Context, t *Tenant) error {
	if t.ID == "" {
		t.ID = NewID(PrefixTenant)
	}
	return wrap("create tenant", s.q(ctx).Create(t).Error)
}

// GetTenant finds a tenant by id or slug.
func (s *Store) GetTenant(ctx context.Context, idOrSlug string) (*Tenant, error) {
	var t Tenant
	err := s.q(ctx).Where("id = ? OR slug = ?", idOrSlug, idOrSlug).First(&t).Error
	if err != nil {
		return nil, wrap("get tenant", err)
	}
	return &t, nil
}

// ListTenants returns one page of all tenants, oldest first. Only the
// platform operator may see this list; the caller checks that.
func (s *Store) ListTenants(ctx context.Context, p Page) ([]Tenant, string, error) {
	var rows []Tenant
	if err := paged(s.q(ctx), "id", p).Find(&rows).Error; err != nil {
		return nil, "", wrap("list tenants", err)
	}
	rows, next := nextCursor(rows, p, func(t Tenant) string { return t.ID })
	return rows, next, nil
}

// UpdateTenant changes the fields given (name, retention_days) of the tenant.
func (s *Store) UpdateTenant(ctx context.Context, id string, fields map[string]any) error {
	fields["updated_at"] = s.db.NowFunc()
	res := s.q(ctx).Model(&Tenant{}).Where("id = ?", id).Updates(fields)
	if res.Error != nil {
		return wrap("update tenant", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("update tenant", ErrNotFound)
	}
	return nil
}

// TenantsWithRetention lists the tenants whose dialogs expire.
func (s *Store) TenantsWithRetention(ctx context.Context) ([]Tenant, error) {
	var rows []Tenant
	err := s.q(ctx).Where("retention_days > 0").Order("id").Find(&rows).Error
	return rows, wrap("tenants with retention", err)
}
