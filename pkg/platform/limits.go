package platform

import (
	"context"
	"math"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/store"
)

// TenantLimits are a tenant's own limits, its plan: a null field uses the
// server's setting (PARLEY_DAILY_TOKEN_QUOTA, PARLEY_RATE_LIMIT_TENANT).
type TenantLimits struct {
	// DailyTokenQuota is input plus output tokens per UTC day; 0 is
	// unlimited.
	DailyTokenQuota *int64
	// RatePerSecond is messages per second for the whole tenant, with
	// bursts of RateBurst (default one second's worth); 0 is unlimited.
	RatePerSecond *float64
	RateBurst     *int
}

// GetTenantLimits returns the tenant's own limits; its members may read
// them, as they read its usage.
func (s *Service) GetTenantLimits(ctx context.Context, p *Principal, tenant string) (TenantLimits, error) {
	t, err := s.tenantFor(ctx, p, tenant, auth.ObjUsage, auth.ActRead)
	if err != nil {
		return TenantLimits{}, err
	}
	return s.LimitsOf(ctx, t.ID)
}

// PutTenantLimits replaces the tenant's limits. Only the platform operator
// sets a tenant's plan.
func (s *Service) PutTenantLimits(ctx context.Context, p *Principal, tenant string, l TenantLimits) (TenantLimits, error) {
	if err := requirePlatform(p); err != nil {
		return TenantLimits{}, err
	}
	t, err := s.tenantFor(ctx, p, tenant, auth.ObjTenant, auth.ActWrite)
	if err != nil {
		return TenantLimits{}, err
	}
	var ps problems
	if q := l.DailyTokenQuota; q != nil && *q < 0 {
		ps.add("/daily_token_quota", "must be 0 (unlimited) or more tokens")
	}
	if r := l.RatePerSecond; r != nil && (*r < 0 || math.IsNaN(*r) || math.IsInf(*r, 0)) {
		ps.add("/rate_per_second", "must be 0 (unlimited) or more messages per second")
	}
	if b := l.RateBurst; b != nil && (*b < 1 || *b > 100_000) {
		ps.add("/rate_burst", "must be between 1 and 100000")
	}
	if err := ps.err(); err != nil {
		return TenantLimits{}, err
	}
	row := store.TenantLimits{TenantID: t.ID, DailyTokenQuota: l.DailyTokenQuota, RatePerSecond: l.RatePerSecond, RateBurst: l.RateBurst}
	err = s.audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		detail := map[string]any{"daily_token_quota": l.DailyTokenQuota, "rate_per_second": l.RatePerSecond, "rate_burst": l.RateBurst}
		return auditRecord{action: AuditLimitsSet, target: t.Slug, detail: detail}, tx.Tenant(row.TenantID).Limits().Put(ctx, &row)
	})
	if err != nil {
		return TenantLimits{}, s.internal(ctx, "put tenant limits", err)
	}
	return l, nil
}

// LimitsOf returns the tenant's (by id) own limits, for the dialog
// runtime.
func (s *Service) LimitsOf(ctx context.Context, tenantID string) (TenantLimits, error) {
	row, err := s.store.Tenant(tenantID).Limits().Get(ctx)
	if err != nil {
		return TenantLimits{}, s.internal(ctx, "tenant limits", err)
	}
	return TenantLimits{DailyTokenQuota: row.DailyTokenQuota, RatePerSecond: row.RatePerSecond, RateBurst: row.RateBurst}, nil
}
