package platform

import (
	"context"
	"errors"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/store"
)

// Sessions is the sign-in sessions of people: reach it with Service.Sessions().
type Sessions struct{ svc *Service }

// Sessions returns the sign-in sessions of people.
func (s *Service) Sessions() Sessions { return Sessions{s} }

// AuditMemberSessionsEnded is the audit action of an admin signing a
// member out everywhere.
const AuditMemberSessionsEnded = "member.sessions_ended"

// List returns the caller's sessions in their wire form (never a
// token), newest first; an API key or the operator has none.
func (se Sessions) List(ctx context.Context, p *Principal) ([]apiclient.Session, error) {
	s := se.svc
	if p == nil {
		return nil, unauthorized("authentication required")
	}
	out := []apiclient.Session{}
	if p.Kind != KindSession {
		return out, nil
	}
	rows, err := s.store.Sessions().ListOf(ctx, p.UserID, s.now())
	if err != nil {
		return nil, s.internal(ctx, "list sessions", err)
	}
	for _, r := range rows {
		out = append(out, apiclient.Session{ID: r.ID(), Via: r.Via, TenantID: r.TenantID, CreatedAt: r.CreatedAt,
			ExpiresAt: r.ExpiresAt, Current: r.ID() == p.SessionID})
	}
	return out, nil
}

// End signs the caller's session with this id out (another
// device, or this one).
func (se Sessions) End(ctx context.Context, p *Principal, id string) error {
	s := se.svc
	if p == nil {
		return unauthorized("authentication required")
	}
	if p.Kind != KindSession {
		return NotFound("session")
	}
	err := s.store.Sessions().DeleteOf(ctx, p.UserID, id)
	return s.storeErr(ctx, "end session", "session", "", err)
}

// EndMember signs a member of the tenant out everywhere: every
// session of the user ends (sessions are the user's, not the tenant's).
// user is the member's id or email. Audited in the tenant.
func (se Sessions) EndMember(ctx context.Context, p *Principal, tenant, user string) (int64, error) {
	s := se.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjMembers, auth.ActWrite)
	if err != nil {
		return 0, err
	}
	u, err := s.store.Users().Get(ctx, user)
	if errors.Is(err, store.ErrNotFound) {
		u, err = s.store.Users().ByEmail(ctx, user)
	}
	if err != nil {
		return 0, s.storeErr(ctx, "end member sessions", "member", "", err)
	}
	if _, err := s.store.Tenant(t.ID).Members().Get(ctx, u.ID); err != nil {
		return 0, s.storeErr(ctx, "end member sessions", "member", "", err)
	}
	var n int64
	err = s.AuditLog().audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		var err error
		if n, err = tx.Sessions().CountOf(ctx, u.ID); err != nil {
			return auditRecord{}, err
		}
		return auditRecord{action: AuditMemberSessionsEnded, target: u.Email, detail: map[string]any{"sessions": n}},
			tx.Sessions().DeleteAllOf(ctx, u.ID)
	})
	if err != nil {
		return 0, s.internal(ctx, "end member sessions", err)
	}
	return n, nil
}
