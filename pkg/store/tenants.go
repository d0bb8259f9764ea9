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
	// IdleMinutes is how long a dialog stays quiet before its outcome is
	// computed; 0 waits for it to close.
	IdleMinutes int `gorm:"default:30"`
	// RequireTwoFactor asks members who sign in with a password for a
	// second factor before their session acts in the tenant.
	RequireTwoFactor bool
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// Create inserts t, giving it an id when it has none. A taken slug is
// ErrConflict.
func (te Tenants) Create(ctx context.Context, t *Tenant) error {
	s := te.s
	if t.ID == "" {
		t.ID = NewID(PrefixTenant)
	}
	return wrap("create tenant", s.q(ctx).Create(t).Error)
}

// Get finds a tenant by id or slug.
func (te Tenants) Get(ctx context.Context, idOrSlug string) (*Tenant, error) {
	s := te.s
	var t Tenant
	err := s.q(ctx).Where("id = ? OR slug = ?", idOrSlug, idOrSlug).First(&t).Error
	if err != nil {
		return nil, wrap("get tenant", err)
	}
	return &t, nil
}

// List returns one page of all tenants, oldest first. Only the
// platform operator may see this list; the caller checks that.
func (te Tenants) List(ctx context.Context, p Page) ([]Tenant, string, error) {
	s := te.s
	var rows []Tenant
	if err := paged(s.q(ctx), "id", p).Find(&rows).Error; err != nil {
		return nil, "", wrap("list tenants", err)
	}
	rows, next := nextCursor(rows, p, func(t Tenant) string { return t.ID })
	return rows, next, nil
}

// Update changes the fields given (name, retention_days) of the tenant.
func (te Tenants) Update(ctx context.Context, id string, fields map[string]any) error {
	s := te.s
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

// WithIdlePeriod lists the tenants whose quiet dialogs get an outcome
// (IdleMinutes above 0).
func (te Tenants) WithIdlePeriod(ctx context.Context) ([]Tenant, error) {
	var rows []Tenant
	err := te.s.q(ctx).Where("idle_minutes > 0").Order("id").Find(&rows).Error
	return rows, wrap("tenants with an idle period", err)
}

// WithRetention lists the tenants whose dialogs expire.
func (te Tenants) WithRetention(ctx context.Context) ([]Tenant, error) {
	s := te.s
	var rows []Tenant
	err := s.q(ctx).Where("retention_days > 0").Order("id").Find(&rows).Error
	return rows, wrap("tenants with retention", err)
}
