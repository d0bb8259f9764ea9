package store

import (
	"context"
	"errors"

	"gorm.io/gorm/clause"
)

// Limits are a tenant's limits: reach them with Store.Tenant(id).Limits().
type Limits struct{ scope }

// TenantLimits are one tenant's own limits, its plan. A nil field uses
// the server's setting; a daily quota of 0 is unlimited.
type TenantLimits struct {
	TenantID        string `gorm:"primaryKey"`
	DailyTokenQuota *int64
	RatePerSecond   *float64
	RateBurst       *int
}

// Get returns the tenant's limits; a tenant that has none set
// gets an empty TenantLimits (every field the server's).
func (li Limits) Get(ctx context.Context) (*TenantLimits, error) {
	s, tenantID := li.s, li.tenant
	var l TenantLimits
	err := s.q(ctx).Where("tenant_id = ?", tenantID).First(&l).Error
	if err = wrap("get tenant limits", err); errors.Is(err, ErrNotFound) {
		return &TenantLimits{TenantID: tenantID}, nil
	}
	return &l, err
}

// Put replaces the tenant's limits in one statement.
func (li Limits) Put(ctx context.Context, l *TenantLimits) error {
	s := li.s
	l.TenantID = li.tenant
	err := s.q(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "tenant_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"daily_token_quota", "rate_per_second", "rate_burst"}),
	}).Create(l).Error
	return wrap("put tenant limits", err)
}
