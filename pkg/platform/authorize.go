package platform

import (
	"context"

	"github.com/parleyhq/parley/pkg/store"
)

// tenantFor resolves a tenant reference (id or slug) and checks that p may
// perform action on object there. A tenant p has no role in is not_found,
// exactly like one that does not exist, so probing reveals nothing; a
// tenant p belongs to but may not act on in this way is forbidden.
func (a Auth) tenantFor(ctx context.Context, p *Principal, ref, object, action string) (*store.Tenant, error) {
	s := a.svc
	if p == nil {
		return nil, unauthorized("authentication required")
	}
	t, err := s.store.Tenants().Get(ctx, ref)
	if err != nil {
		return nil, s.storeErr(ctx, "resolve tenant", "tenant", "", err)
	}
	if err := s.Auth().Authorize(p, t.ID, object, action); err != nil {
		return nil, err
	}
	return t, nil
}

// AuthorizeTenant resolves a tenant reference (id or slug), checks that p
// may perform action on object there, and returns the tenant's id. A
// tenant p has no role in is not_found, like one that does not exist.
func (a Auth) AuthorizeTenant(ctx context.Context, p *Principal, ref, object, action string) (string, error) {
	s := a.svc
	t, err := s.Auth().tenantFor(ctx, p, ref, object, action)
	if err != nil {
		return "", err
	}
	return t.ID, nil
}

// Authorize checks that p may perform action on object in the tenant with
// this id: a tenant p has no business in is not_found, an action p may not
// take there forbidden.
func (a Auth) Authorize(p *Principal, tenantID, object, action string) error {
	s := a.svc
	if p.IsPlatform() {
		return nil
	}
	subjects := p.subjects(tenantID)
	if len(subjects) == 0 {
		return NotFound("tenant")
	}
	for _, sub := range subjects {
		if s.opts.Authorizer.Can(sub, tenantID, object, action) {
			return nil
		}
	}
	return Errorf(CodeForbidden, "not allowed to %s %s", action, object)
}

// requirePlatform lets only the operator through.
func requirePlatform(p *Principal) error {
	if p == nil {
		return unauthorized("authentication required")
	}
	if !p.IsPlatform() {
		return Errorf(CodeForbidden, "only the platform operator may do this")
	}
	return nil
}
