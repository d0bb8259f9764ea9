package platform

import (
	"context"
	"errors"
	"net/mail"
	"slices"
	"strings"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/store"
)

// owner is a tenant owner made ready outside the tenant's transaction:
// either an existing user or a new one with its password already hashed.
type owner struct {
	existing *store.User
	create   *store.User
}

func (s *Service) prepareOwner(ctx context.Context, in CreateTenantInput) (*owner, error) {
	if in.OwnerEmail == "" {
		return nil, nil
	}
	u, err := s.store.GetUserByEmail(ctx, in.OwnerEmail)
	if err == nil {
		return &owner{existing: u}, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, s.internal(ctx, "prepare owner", err)
	}
	nu, err := s.newUser(ctx, in.OwnerEmail, in.OwnerPassword, "/owner_email", "/owner_password")
	if err != nil {
		return nil, err
	}
	return &owner{create: nu}, nil
}

func (s *Service) addOwner(ctx context.Context, tx *store.Store, tenantID string, o *owner) error {
	if o == nil {
		return nil
	}
	u := o.existing
	if o.create != nil {
		if err := tx.CreateUser(ctx, o.create); err != nil {
			return s.storeErr(ctx, "create owner", "user", "a user with this email already exists", err)
		}
		u = o.create
	}
	if _, err := tx.PutMembership(ctx, tenantID, u.ID, auth.RoleOwner); err != nil {
		return s.internal(ctx, "add owner", err)
	}
	return nil
}

// newUser validates an email and password and returns an unsaved user with
// the password hashed.
func (s *Service) newUser(ctx context.Context, email, password, emailPtr, passwordPtr string) (*store.User, error) {
	var ps problems
	if a, err := mail.ParseAddress(email); err != nil || a.Address != strings.TrimSpace(email) {
		ps.add(emailPtr, "must be a plain email address such as ada@example.com")
	}
	if len(password) < auth.MinPasswordLength || len(password) > 72 {
		ps.add(passwordPtr, "must have %d to 72 characters", auth.MinPasswordLength)
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	hash, err := s.opts.Passwords.Hash(password)
	if err != nil {
		return nil, s.internal(ctx, "hash password", err)
	}
	return &store.User{Email: email, PasswordHash: hash}, nil
}

// CreateUser creates an admin UI user. Only the platform operator may; tenant
// admins add people with AddMember.
func (s *Service) CreateUser(ctx context.Context, p *Principal, email, password string) (User, error) {
	if err := requirePlatform(p); err != nil {
		return User{}, err
	}
	u, err := s.newUser(ctx, email, password, "/email", "/password")
	if err != nil {
		return User{}, err
	}
	if err := s.store.CreateUser(ctx, u); err != nil {
		return User{}, s.storeErr(ctx, "create user", "user", "a user with this email already exists", err)
	}
	return userView(u), nil
}

// AddMember gives an existing user a role in the tenant, replacing any
// earlier role. Granting or changing ownership needs the owner's rights
// (tenant write), so an admin cannot make themselves owner.
func (s *Service) AddMember(ctx context.Context, p *Principal, tenant, email, role string) (Member, error) {
	t, err := s.tenantFor(ctx, p, tenant, auth.ObjMembers, auth.ActWrite)
	if err != nil {
		return Member{}, err
	}
	if !slices.Contains(auth.Roles(), role) {
		return Member{}, Invalid(Detail{Pointer: "/role", Message: "must be one of owner, admin, editor, viewer"})
	}
	u, err := s.store.GetUserByEmail(ctx, email)
	if err != nil {
		return Member{}, s.storeErr(ctx, "add member", "user", "", err)
	}
	current, err := s.currentRole(ctx, t.ID, u.ID)
	if err != nil {
		return Member{}, err
	}
	if role == auth.RoleOwner || current == auth.RoleOwner {
		if err := s.Authorize(p, t.ID, auth.ObjTenant, auth.ActWrite); err != nil {
			return Member{}, err
		}
	}
	if _, err := s.store.PutMembership(ctx, t.ID, u.ID, role); err != nil {
		return Member{}, s.internal(ctx, "add member", err)
	}
	return Member{UserID: u.ID, Email: u.Email, Role: role}, nil
}

// currentRole is the user's role in the tenant, "" when none.
func (s *Service) currentRole(ctx context.Context, tenantID, userID string) (string, error) {
	ms, err := s.store.Memberships(ctx, userID)
	if err != nil {
		return "", s.internal(ctx, "current role", err)
	}
	for _, m := range ms {
		if m.TenantID == tenantID {
			return m.Role, nil
		}
	}
	return "", nil
}

// ListMembers lists the tenant's users and their roles.
func (s *Service) ListMembers(ctx context.Context, p *Principal, tenant string) ([]Member, error) {
	t, err := s.tenantFor(ctx, p, tenant, auth.ObjMembers, auth.ActRead)
	if err != nil {
		return nil, err
	}
	ms, err := s.store.ListMembers(ctx, t.ID)
	if err != nil {
		return nil, s.internal(ctx, "list members", err)
	}
	out := make([]Member, 0, len(ms))
	for _, m := range ms {
		u, err := s.store.GetUser(ctx, m.UserID)
		if err != nil {
			return nil, s.internal(ctx, "list members", err)
		}
		out = append(out, Member{UserID: u.ID, Email: u.Email, Role: m.Role})
	}
	return out, nil
}
