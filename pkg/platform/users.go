package platform

import (
	"context"
	"errors"
	"net/mail"
	"strings"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/store"
)

// Users is the people who sign in: reach it with Service.Users().
type Users struct{ svc *Service }

// Users returns the people who sign in.
func (s *Service) Users() Users { return Users{s} }

// owner is a tenant owner made ready outside the tenant's transaction:
// either an existing user or a new one with its password already hashed.
type owner struct {
	existing *store.User
	create   *store.User
}

func (us Users) prepareOwner(ctx context.Context, in CreateTenantInput) (*owner, error) {
	s := us.svc
	if in.OwnerEmail == "" {
		return nil, nil
	}
	u, err := s.store.Users().ByEmail(ctx, in.OwnerEmail)
	if err == nil {
		return &owner{existing: u}, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, s.internal(ctx, "prepare owner", err)
	}
	nu, err := s.Users().newUser(ctx, in.OwnerEmail, in.OwnerPassword, "/owner_email", "/owner_password")
	if err != nil {
		return nil, err
	}
	return &owner{create: nu}, nil
}

func (us Users) addOwner(ctx context.Context, tx *store.Store, tenantID string, o *owner) error {
	s := us.svc
	if o == nil {
		return nil
	}
	u := o.existing
	if o.create != nil {
		if err := tx.Users().Create(ctx, o.create); err != nil {
			return s.storeErr(ctx, "create owner", "user", "a user with this email already exists", err)
		}
		u = o.create
	}
	if _, err := tx.Tenant(tenantID).Members().Put(ctx, u.ID, auth.RoleOwner); err != nil {
		return s.internal(ctx, "add owner", err)
	}
	return nil
}

// newUser validates an email and password and returns an unsaved user with
// the password hashed.
func (u Users) newUser(ctx context.Context, email, password, emailPtr, passwordPtr string) (*store.User, error) {
	s := u.svc
	var ps problems
	checkEmail(&ps, email, emailPtr)
	if msg := auth.CheckPassword(password, email); msg != "" {
		ps.add(passwordPtr, "%s", msg)
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

// checkEmail adds a problem at ptr unless email is a plain address.
func checkEmail(ps *problems, email, ptr string) {
	if a, err := mail.ParseAddress(email); err != nil || a.Address != strings.TrimSpace(email) {
		ps.add(ptr, "must be a plain email address such as ada@example.com")
	}
}

// Create creates an admin UI user. Only the platform operator may; tenant
// admins add people with AddMember.
func (us Users) Create(ctx context.Context, p *Principal, email, password string) (User, error) {
	s := us.svc
	if err := requirePlatform(p); err != nil {
		return User{}, err
	}
	u, err := s.Users().newUser(ctx, email, password, "/email", "/password")
	if err != nil {
		return User{}, err
	}
	if err := s.store.Users().Create(ctx, u); err != nil {
		return User{}, s.storeErr(ctx, "create user", "user", "a user with this email already exists", err)
	}
	return userView(u), nil
}

// SetPassword sets a user's password, for the operator (parley user
// set-password): their sessions end. Their pending invites still need
// accepting, now with this password.
func (us Users) SetPassword(ctx context.Context, p *Principal, email, password string) (User, error) {
	s := us.svc
	if err := requirePlatform(p); err != nil {
		return User{}, err
	}
	u, err := s.store.Users().ByEmail(ctx, email)
	if err != nil {
		return User{}, s.storeErr(ctx, "set password", "user", "", err)
	}
	if msg := auth.CheckPassword(password, u.Email); msg != "" {
		return User{}, Invalid(Detail{Pointer: "/password", Message: msg})
	}
	hash, err := s.opts.Passwords.Hash(password)
	if err != nil {
		return User{}, s.internal(ctx, "hash password", err)
	}
	err = s.store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.Users().SetPassword(ctx, u.ID, hash); err != nil {
			return err
		}
		return tx.Sessions().DeleteAllOf(ctx, u.ID)
	})
	if err != nil {
		return User{}, s.internal(ctx, "set password", err)
	}
	return userView(u), nil
}

// UserWithRoles is a user with every tenant role, for the operator.
type UserWithRoles struct {
	User
	Pending bool
	// Roles maps tenant slugs to the user's role there.
	Roles map[string]string
}

// List lists every user with their roles, for the operator (parley
// user list).
func (u Users) List(ctx context.Context, p *Principal) ([]UserWithRoles, error) {
	s := u.svc
	if err := requirePlatform(p); err != nil {
		return nil, err
	}
	users, err := s.store.Users().List(ctx)
	if err != nil {
		return nil, s.internal(ctx, "list users", err)
	}
	out := make([]UserWithRoles, 0, len(users))
	for i := range users {
		ms, err := s.store.Users().Memberships(ctx, users[i].ID)
		if err != nil {
			return nil, s.internal(ctx, "list users", err)
		}
		uw := UserWithRoles{User: userView(&users[i]), Pending: users[i].PasswordHash == "", Roles: map[string]string{}}
		for _, m := range ms {
			t, err := s.store.Tenants().Get(ctx, m.TenantID)
			if err != nil {
				return nil, s.internal(ctx, "list users", err)
			}
			uw.Roles[t.Slug] = m.Role
			if m.Pending {
				uw.Roles[t.Slug] += " (invited)"
			}
		}
		out = append(out, uw)
	}
	return out, nil
}
