package platform

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/store"
)

// Members is a tenant's members and invites: reach it with Service.Members().
type Members struct{ svc *Service }

// Members returns a tenant's members and invites.
func (s *Service) Members() Members { return Members{s} }

// InviteTTL is how long an invite link works.
const InviteTTL = 7 * 24 * time.Hour

// Invitation is a member just invited or added. Token, shown this once,
// lets a user who has no password yet set one (AcceptInvite); it is ""
// when the user had a password already and was simply added.
type Invitation struct {
	Member
	Token     string
	ExpiresAt time.Time
}

// errLastOwner refuses to leave a tenant without an owner: nobody could
// then grant ownership or change the tenant.
var errLastOwner = Errorf(CodeConflict, "this is the tenant's last owner; make another member owner first")

// List lists the tenant's users and their roles, by email.
func (me Members) List(ctx context.Context, p *Principal, tenant string) ([]Member, error) {
	s := me.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjMembers, auth.ActRead)
	if err != nil {
		return nil, err
	}
	rows, err := s.store.Tenant(t.ID).Members().ListWithUsers(ctx)
	if err != nil {
		return nil, s.internal(ctx, "list members", err)
	}
	return mapSlice(rows, func(m *store.Member) Member {
		return Member{UserID: m.UserID, Email: m.Email, Role: m.Role, Pending: m.Pending}
	}), nil
}

// Invite gives the person with this email a role in the tenant,
// pending until they accept: the answer carries a one-time invite token
// (AcceptInvite). A person without an account gets one without a
// password, which accepting sets; a person with one accepts with their
// password. So no tenant's admin can give a person's account, or what it
// may do elsewhere, to anyone else: each tenant's membership is activated
// only by that tenant's token, and an account's password is set only
// once. Inviting a pending member again (with the same role) replaces the
// token. The operator adds a person who has an account at once (no
// token). Inviting a member is a conflict: change their role instead.
// Granting ownership takes the owner's rights.
func (me Members) Invite(ctx context.Context, p *Principal, tenant, email, role string) (Invitation, error) {
	s := me.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjMembers, auth.ActWrite)
	if err != nil {
		return Invitation{}, err
	}
	var ps problems
	checkEmail(&ps, email, "/email")
	checkRole(&ps, role)
	if err := ps.err(); err != nil {
		return Invitation{}, err
	}
	if role == auth.RoleOwner {
		if err := s.Auth().Authorize(p, t.ID, auth.ObjTenant, auth.ActWrite); err != nil {
			return Invitation{}, err
		}
	}
	var inv Invitation
	err = s.AuditLog().auditedEvent(ctx, p, memberEvent(t.ID), func(tx *store.Store) (any, auditRecord, error) {
		members := tx.Tenant(t.ID).Members()
		if err := members.Lock(ctx); err != nil {
			return nil, auditRecord{}, err
		}
		u, err := userForInvite(ctx, tx, email)
		if err != nil {
			return nil, auditRecord{}, err
		}
		m, err := members.Get(ctx, u.ID)
		switch {
		case err == nil && !m.Pending:
			return nil, auditRecord{}, Errorf(CodeConflict, "%s is a member already; change their role instead", u.Email)
		case err == nil && m.Role != role:
			// Inviting again sends a fresh link; it changes no role, which
			// takes the checks of SetMemberRole.
			return nil, auditRecord{}, Errorf(CodeConflict, "%s is invited already as %s; change their role instead, or invite them as %s for a fresh link", u.Email, m.Role, m.Role)
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return nil, auditRecord{}, err
		}
		invited := err == nil
		inv.Member = Member{UserID: u.ID, Email: u.Email, Role: role, Pending: true}
		if p.IsPlatform() && u.PasswordHash != "" {
			inv.Pending = false
			if _, err := members.Put(ctx, u.ID, role); err != nil {
				return nil, auditRecord{}, err
			}
			if err := members.Activate(ctx, u.ID); err != nil {
				return nil, auditRecord{}, err
			}
			return memberChanged(p, "added", inv.Member, ""), auditRecord{action: AuditMemberAdded, target: u.Email, detail: map[string]any{"role": role}}, nil
		}
		if !invited {
			if err := members.AddPending(ctx, u.ID, role); err != nil {
				return nil, auditRecord{}, err
			}
		}
		if inv.Token, inv.ExpiresAt, err = s.Members().newInvite(ctx, tx, u.ID, t.ID); err != nil {
			return nil, auditRecord{}, err
		}
		return memberChanged(p, "invited", inv.Member, ""), auditRecord{action: AuditMemberInvited, target: u.Email, detail: map[string]any{"role": role}}, nil
	})
	if err != nil {
		return Invitation{}, s.Members().memberErr(ctx, "invite member", err)
	}
	return inv, nil
}

// userForInvite is the user with this email, created without a password
// when there is none.
func userForInvite(ctx context.Context, tx *store.Store, email string) (*store.User, error) {
	u, err := tx.Users().ByEmail(ctx, email)
	if !errors.Is(err, store.ErrNotFound) {
		return u, err
	}
	u = &store.User{Email: email}
	return u, tx.Users().Create(ctx, u)
}

// newInvite replaces the user's invites to the tenant with a fresh one.
func (m Members) newInvite(ctx context.Context, tx *store.Store, userID, tenantID string) (string, time.Time, error) {
	s := m.svc
	if err := tx.Tenant(tenantID).Members().DeleteInvites(ctx, userID); err != nil {
		return "", time.Time{}, err
	}
	token, hash, err := auth.NewInviteToken()
	if err != nil {
		return "", time.Time{}, err
	}
	expires := s.now().Add(InviteTTL)
	return token, expires, tx.Tenant(tenantID).Members().Invite(ctx, &store.Invite{TokenHash: hash, UserID: userID, TenantID: tenantID, ExpiresAt: expires})
}

// Add gives an existing user a role in the tenant, replacing any
// earlier role: InviteMember or SetMemberRole for someone who has an
// account.
func (m Members) Add(ctx context.Context, p *Principal, tenant, email, role string) (Member, error) {
	s := m.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjMembers, auth.ActWrite)
	if err != nil {
		return Member{}, err
	}
	u, err := s.store.Users().ByEmail(ctx, email)
	if err != nil {
		return Member{}, s.storeErr(ctx, "add member", "user", "", err)
	}
	if _, err := s.store.Tenant(t.ID).Members().Get(ctx, u.ID); err == nil {
		return s.Members().SetRole(ctx, p, t.ID, u.ID, role)
	}
	inv, err := s.Members().Invite(ctx, p, t.ID, u.Email, role)
	return inv.Member, err
}

// SetRole changes a member's role; user is the member's user id or
// email. Changing an owner's role or making someone owner takes the
// owner's rights, and the last owner stays an owner.
func (me Members) SetRole(ctx context.Context, p *Principal, tenant, user, role string) (Member, error) {
	s := me.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjMembers, auth.ActWrite)
	if err != nil {
		return Member{}, err
	}
	var ps problems
	checkRole(&ps, role)
	if err := ps.err(); err != nil {
		return Member{}, err
	}
	var out Member
	err = s.AuditLog().auditedEvent(ctx, p, memberEvent(t.ID), func(tx *store.Store) (any, auditRecord, error) {
		u, m, err := s.Members().lockedMember(ctx, tx, p, t.ID, user, role == auth.RoleOwner)
		if err != nil {
			return nil, auditRecord{}, err
		}
		out = Member{UserID: u.ID, Email: u.Email, Role: role, Pending: m.Pending}
		if m.Role == role {
			return nil, auditRecord{}, nil
		}
		if m.Role == auth.RoleOwner && !m.Pending {
			if err := keepAnOwner(ctx, tx, t.ID); err != nil {
				return nil, auditRecord{}, err
			}
		}
		if _, err := tx.Tenant(t.ID).Members().Put(ctx, u.ID, role); err != nil {
			return nil, auditRecord{}, err
		}
		return memberChanged(p, "role_changed", out, m.Role), auditRecord{action: AuditMemberRoleChanged, target: u.Email,
			detail: map[string]any{"role": role, "previous_role": m.Role}}, nil
	})
	if err != nil {
		return Member{}, s.Members().memberErr(ctx, "set member role", err)
	}
	return out, nil
}

// Remove takes a member out of the tenant (user is the user id or
// email), with their pending invite. Removing an owner takes the owner's
// rights, and the last owner cannot be removed. The user's sessions lose
// the tenant with their next request.
func (me Members) Remove(ctx context.Context, p *Principal, tenant, user string) error {
	s := me.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjMembers, auth.ActWrite)
	if err != nil {
		return err
	}
	err = s.AuditLog().auditedEvent(ctx, p, memberEvent(t.ID), func(tx *store.Store) (any, auditRecord, error) {
		u, m, err := s.Members().lockedMember(ctx, tx, p, t.ID, user, false)
		if err != nil {
			return nil, auditRecord{}, err
		}
		if m.Role == auth.RoleOwner && !m.Pending {
			if err := keepAnOwner(ctx, tx, t.ID); err != nil {
				return nil, auditRecord{}, err
			}
		}
		members := tx.Tenant(t.ID).Members()
		if err := members.Delete(ctx, u.ID); err != nil {
			return nil, auditRecord{}, err
		}
		if err := members.DeleteInvites(ctx, u.ID); err != nil {
			return nil, auditRecord{}, err
		}
		gone := Member{UserID: u.ID, Email: u.Email}
		return memberChanged(p, "removed", gone, m.Role), auditRecord{action: AuditMemberRemoved, target: u.Email, detail: map[string]any{"role": m.Role}}, nil
	})
	return s.Members().memberErr(ctx, "remove member", err)
}

// lockedMember locks the tenant's memberships for the rest of tx and
// returns the member user names (an id or an email) with their
// membership. Touching an owner, or making one (toOwner), takes the
// owner's rights.
func (me Members) lockedMember(ctx context.Context, tx *store.Store, p *Principal, tenantID, user string, toOwner bool) (*store.User, *store.Membership, error) {
	s := me.svc
	if err := tx.Tenant(tenantID).Members().Lock(ctx); err != nil {
		return nil, nil, err
	}
	u, err := tx.Users().Get(ctx, user)
	if errors.Is(err, store.ErrNotFound) {
		u, err = tx.Users().ByEmail(ctx, user)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, NotFound("member")
	}
	if err != nil {
		return nil, nil, err
	}
	m, err := tx.Tenant(tenantID).Members().Get(ctx, u.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, NotFound("member")
	}
	if err != nil {
		return nil, nil, err
	}
	if toOwner || m.Role == auth.RoleOwner {
		if err := s.Auth().Authorize(p, tenantID, auth.ObjTenant, auth.ActWrite); err != nil {
			return nil, nil, err
		}
	}
	return u, m, nil
}

// keepAnOwner refuses a change that takes away one owner when only one is
// left. Its caller holds the tenant's lock (LockTenant), so two owners
// demoting each other at once cannot both pass.
func keepAnOwner(ctx context.Context, tx *store.Store, tenantID string) error {
	n, err := tx.Tenant(tenantID).Members().CountOwners(ctx)
	if err != nil {
		return err
	}
	if n <= 1 {
		return errLastOwner
	}
	return nil
}

func checkRole(ps *problems, role string) {
	if !slices.Contains(auth.Roles(), role) {
		ps.add("/role", "must be one of %s", strings.Join(auth.Roles(), ", "))
	}
}

// memberErr passes platform errors through and maps store errors.
func (m Members) memberErr(ctx context.Context, op string, err error) error {
	s := m.svc
	var pe *Error
	if err == nil || errors.As(err, &pe) {
		return err
	}
	return s.storeErr(ctx, op, "member", "a member changed at the same time; try again", err)
}

// errInviteGone answers an invite token that is unknown, used or expired,
// alike.
var errInviteGone = Errorf(CodeNotFound, "this invite link is unknown, used or expired; ask an admin of the tenant for a new one")

// errHasPassword refuses to accept an invite for an account that has a
// password without it.
var errHasPassword = unauthorized("this email has a Parley account already: enter its password to accept the invite")

// AcceptInvite activates the membership of a one-time invite token and
// signs its user in. A user without a password chooses one here; a user
// with one must give it, so a token never sets the password of an account
// that has one. ip is the caller's address for the audit log.
func (me Members) AcceptInvite(ctx context.Context, token, password, ip string) (Session, error) {
	s := me.svc
	hash := auth.HashToken(token)
	inv, err := s.store.Invites().Get(ctx, hash, s.now())
	if errors.Is(err, store.ErrNotFound) {
		return Session{}, errInviteGone
	}
	if err != nil {
		return Session{}, s.internal(ctx, "accept invite", err)
	}
	u, err := s.store.Users().Get(ctx, inv.UserID)
	if err != nil {
		return Session{}, s.internal(ctx, "accept invite: user", err)
	}
	// The new password is hashed before the transaction: bcrypt takes a
	// while, and the transaction holds SQLite's write lock.
	pwHash, err := s.Members().inviteePassword(ctx, u, password)
	if err != nil {
		return Session{}, err
	}
	who := &Principal{Kind: KindSession, UserID: u.ID, Email: u.Email, IP: ip}
	err = s.AuditLog().auditedEvent(ctx, who, memberEvent(inv.TenantID), func(tx *store.Store) (any, auditRecord, error) {
		if err := tx.Invites().Take(ctx, hash, s.now()); err != nil {
			return nil, auditRecord{}, err // used meanwhile, by a second click
		}
		if pwHash != "" {
			now, err := tx.Users().Get(ctx, u.ID)
			if err != nil {
				return nil, auditRecord{}, err
			}
			if now.PasswordHash != "" {
				return nil, auditRecord{}, errHasPassword // another invite set it meanwhile
			}
			if err := tx.Users().SetPassword(ctx, u.ID, pwHash); err != nil {
				return nil, auditRecord{}, err
			}
		}
		if err := tx.Tenant(inv.TenantID).Members().Activate(ctx, u.ID); err != nil {
			return nil, auditRecord{}, err
		}
		m, err := tx.Tenant(inv.TenantID).Members().Get(ctx, u.ID)
		if err != nil {
			return nil, auditRecord{}, err
		}
		accepted := Member{UserID: u.ID, Email: u.Email, Role: m.Role}
		return memberChanged(who, "invite_accepted", accepted, m.Role), auditRecord{action: AuditInviteAccepted, target: u.Email}, nil
	})
	var pe *Error
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Session{}, errInviteGone
	case errors.As(err, &pe):
		return Session{}, err
	case err != nil:
		return Session{}, s.internal(ctx, "accept invite", err)
	}
	return s.Auth().startSession(ctx, u)
}

// inviteePassword checks the password of an invited user: a new one,
// against the policy, returned hashed; or the account's own, returning "".
func (m Members) inviteePassword(ctx context.Context, u *store.User, password string) (string, error) {
	s := m.svc
	if u.PasswordHash != "" {
		if err := s.opts.Passwords.Verify(u.PasswordHash, password); err != nil {
			if errors.Is(err, auth.ErrWrongPassword) {
				return "", errHasPassword
			}
			return "", s.internal(ctx, "accept invite: verify", err)
		}
		return "", nil
	}
	if msg := auth.CheckPassword(password, u.Email); msg != "" {
		return "", Invalid(Detail{Pointer: "/password", Message: msg})
	}
	pwHash, err := s.opts.Passwords.Hash(password)
	if err != nil {
		return "", s.internal(ctx, "accept invite: hash", err)
	}
	return pwHash, nil
}
