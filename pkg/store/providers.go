package store

import (
	"context"
	"time"

	"gorm.io/gorm/clause"
)

// Providers are a tenant's model providers: reach them with
// Store.Tenant(id).Providers().
type Providers struct{ scope }

// Provider is a model provider a tenant configured: a kind (openai or
// anthropic), a base URL, the name of the tenant secret holding its API key
// (never the key), default headers as a JSON object, and the models it
// serves as a JSON array ("[]": not listed).
type Provider struct {
	TenantID     string `gorm:"primaryKey"`
	Name         string `gorm:"primaryKey"`
	Kind         string
	BaseURL      string
	APIKeySecret string
	Headers      string
	Models       string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Put creates or replaces the tenant's provider named p.Name in
// one statement.
func (pr Providers) Put(ctx context.Context, p *Provider) error {
	s := pr.s
	p.TenantID = pr.tenant
	now := s.db.NowFunc()
	p.CreatedAt, p.UpdatedAt = now, now
	if p.Headers == "" {
		p.Headers = "{}"
	}
	if p.Models == "" {
		p.Models = "[]"
	}
	err := s.q(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "tenant_id"}, {Name: "name"}},
		DoUpdates: clause.AssignmentColumns([]string{"kind", "base_url", "api_key_secret", "headers", "models", "updated_at"}),
	}).Create(p).Error
	return wrap("put provider", err)
}

// List returns the tenant's providers, by name.
func (pr Providers) List(ctx context.Context) ([]Provider, error) {
	s, tenantID := pr.s, pr.tenant
	var rows []Provider
	if err := s.q(ctx).Where("tenant_id = ?", tenantID).Order("name").Find(&rows).Error; err != nil {
		return nil, wrap("list providers", err)
	}
	return rows, nil
}

// Get returns the tenant's providers with these names; names the
// tenant has none for are left out.
func (pr Providers) Get(ctx context.Context, names []string) ([]Provider, error) {
	s, tenantID := pr.s, pr.tenant
	var rows []Provider
	if len(names) == 0 {
		return rows, nil
	}
	if err := s.q(ctx).Where("tenant_id = ? AND name IN ?", tenantID, names).Order("name").Find(&rows).Error; err != nil {
		return nil, wrap("get providers", err)
	}
	return rows, nil
}

// Delete removes the tenant's provider; an unknown name is
// ErrNotFound.
func (pr Providers) Delete(ctx context.Context, name string) error {
	s, tenantID := pr.s, pr.tenant
	res := s.q(ctx).Where("tenant_id = ? AND name = ?", tenantID, name).Delete(&Provider{})
	if res.Error != nil {
		return wrap("delete provider", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("delete provider", ErrNotFound)
	}
	return nil
}
