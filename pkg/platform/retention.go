package platform

import (
	"context"
	"maps"
	"strings"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/store"
)

// MaxIdleMinutes bounds a tenant's idle period (a week).
const MaxIdleMinutes = 7 * 24 * 60

// MaxRetentionDays bounds a tenant's retention period (100 years).
const MaxRetentionDays = 36500

// UpdateTenantInput changes a tenant; nil fields stay as they are.
type UpdateTenantInput struct {
	Name *string
	// RetentionDays deletes dialogs that many days after their last
	// activity; 0 keeps them.
	RetentionDays *int
	// IdleMinutes is how long a dialog stays quiet before its outcome is
	// computed (docs/insights.md); 0 waits for it to close.
	IdleMinutes *int
	// RequireTwoFactor asks members who sign in with a password for a
	// second factor (two_factor.go).
	RequireTwoFactor *bool
}

// Update changes the tenant's name (owners), retention period (those
// who may erase its dialogs: admins and owners) or two-factor requirement
// (those who manage members).
func (te Tenants) Update(ctx context.Context, p *Principal, tenant string, in UpdateTenantInput) (Tenant, error) {
	s := te.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjTenant, auth.ActRead)
	if err != nil {
		return Tenant{}, err
	}
	fields := map[string]any{}
	var ps problems
	if in.Name != nil {
		if err := s.Auth().Authorize(p, t.ID, auth.ObjTenant, auth.ActWrite); err != nil {
			return Tenant{}, err
		}
		name := strings.TrimSpace(*in.Name)
		ps.name("/name", name, 200)
		fields["name"] = name
	}
	if in.RetentionDays != nil {
		if err := s.Auth().Authorize(p, t.ID, auth.ObjDialogs, auth.ActErase); err != nil {
			return Tenant{}, err
		}
		if d := *in.RetentionDays; d < 0 || d > MaxRetentionDays {
			ps.add("/retention_days", "must be 0 (keep dialogs) to %d days", MaxRetentionDays)
		}
		fields["retention_days"] = *in.RetentionDays
	}
	if in.IdleMinutes != nil {
		if err := s.Auth().Authorize(p, t.ID, auth.ObjTenant, auth.ActWrite); err != nil {
			return Tenant{}, err
		}
		if m := *in.IdleMinutes; m < 0 || m > MaxIdleMinutes {
			ps.add("/idle_minutes", "must be 0 (only at close) to %d minutes", MaxIdleMinutes)
		}
		fields["idle_minutes"] = *in.IdleMinutes
	}
	if in.RequireTwoFactor != nil {
		// Those who may set single sign-on may require a second factor.
		if err := s.Auth().Authorize(p, t.ID, auth.ObjMembers, auth.ActWrite); err != nil {
			return Tenant{}, err
		}
		// Like require_sso: a session without a second factor would lose
		// the tenant the moment it is required.
		if *in.RequireTwoFactor && p.Kind == KindSession && p.SessionVia == store.SessionPassword {
			ps.add("/require_two_factor", "turn two-factor on for your own account (Your account), then sign in again with a code: a password session without one loses this tenant the moment two-factor is required")
		}
		fields["require_two_factor"] = *in.RequireTwoFactor
	}
	if err := ps.err(); err != nil {
		return Tenant{}, err
	}
	if len(fields) == 0 {
		return tenantView(t), nil
	}
	err = s.AuditLog().audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		detail := maps.Clone(fields) // UpdateTenant adds updated_at to fields
		return auditRecord{action: AuditTenantUpdated, target: t.Slug, detail: detail}, tx.Tenants().Update(ctx, t.ID, fields)
	})
	if err != nil {
		return Tenant{}, s.storeErr(ctx, "update tenant", "tenant", "", err)
	}
	t, err = s.store.Tenants().Get(ctx, t.ID)
	if err != nil {
		return Tenant{}, s.storeErr(ctx, "update tenant", "tenant", "", err)
	}
	return tenantView(t), nil
}
