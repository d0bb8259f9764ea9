package platform

import (
	"context"

	"github.com/parleyhq/parley/pkg/store"
)

// tenantFor resolves a tenant reference (id or slug) and checks that p may
// perform action on object there. A tenant p has no role in is not_found,
// exactly like one that does not exist, so probing reveals nothing; a
// tenant p belongs to but may not act on in this way is forbidden.
func (s *Service) tenantFor(ctx context.Context, p *Principal, ref, object, action string) (*store.Tenant, error) {
	if p == nil {
		return nil, unauthorized("authentication required")
	}
	t, err := s.store.GetTenant(ctx, ref)
	if err != nil {
		return nil, s.storeErr(ctx, "resolve tenant", "tenant", "", err)
	}
	if err := s.authorize(p, t.ID, object, action); err != nil {
		return nil, err
	}
	return t, nil
}

// authorize checks p against the policy for one tenant.
func (s *Service) authorize(p *Principal, tenantID, object, action string) error {
	if p.IsPlatform() {
		return nil
	}
	subjects := p.subjects(tenantID)
	if len(subjects) == 0 {
		return notFound("tenant")
	}
	for _, sub := range subjects {
		if s.opts.Authorizer.Can(sub, tenantID, object, action) {
			return nil
		}
	}
	return errorf(CodeForbidden, "not allowed to %s %s", action, object)
}

// requirePlatform lets only the operator through.
func requirePlatform(p *Principal) error {
	if p == nil {
		return unauthorized("authentication required")
	}
	if !p.IsPlatform() {
		return errorf(CodeForbidden, "only the platform operator may do this")
	}
	return nil
}
