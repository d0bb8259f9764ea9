package platform

import (
	"context"
	"math"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/store"
)

// Limits is a tenant's plan limits: reach it with Service.Limits().
type Limits struct{ svc *Service }

// Limits returns a tenant's plan limits.
func (s *Service) Limits() Limits { return Limits{s} }

// TenantLimits are a tenant's own limits, its plan: a null field uses the
// server's setting (PARLEY_DAILY_TOKEN_QUOTA, PARLEY_RATE_LIMIT_TENANT).
// They are the same thing on the wire, so one type serves both.
type TenantLimits = apiclient.TenantLimits

// Get returns the tenant's own limits; its members may read
// them, as they read its usage.
func (l Limits) Get(ctx context.Context, p *Principal, tenant string) (TenantLimits, error) {
	s := l.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjUsage, auth.ActRead)
	if err != nil {
		return TenantLimits{}, err
	}
	return s.Limits().Of(ctx, t.ID)
}

// Put replaces the tenant's limits. Only the platform operator
// sets a tenant's plan.
func (li Limits) Put(ctx context.Context, p *Principal, tenant string, l TenantLimits) (TenantLimits, error) {
	s := li.svc
	if err := requirePlatform(p); err != nil {
		return TenantLimits{}, err
	}
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjTenant, auth.ActWrite)
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
	err = s.AuditLog().audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		detail := map[string]any{"daily_token_quota": l.DailyTokenQuota, "rate_per_second": l.RatePerSecond, "rate_burst": l.RateBurst}
		return auditRecord{action: AuditLimitsSet, target: t.Slug, detail: detail}, tx.Tenant(row.TenantID).Limits().Put(ctx, &row)
	})
	if err != nil {
		return TenantLimits{}, s.internal(ctx, "put tenant limits", err)
	}
	return l, nil
}

// Of returns the tenant's (by id) own limits, for the dialog
// runtime.
func (l Limits) Of(ctx context.Context, tenantID string) (TenantLimits, error) {
	s := l.svc
	row, err := s.store.Tenant(tenantID).Limits().Get(ctx)
	if err != nil {
		return TenantLimits{}, s.internal(ctx, "tenant limits", err)
	}
	return TenantLimits{DailyTokenQuota: row.DailyTokenQuota, RatePerSecond: row.RatePerSecond, RateBurst: row.RateBurst}, nil
}
