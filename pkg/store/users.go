package store

import (
	"context"
	"strings"
	"time"
)

// Users are people, who may belong to many tenants: Store.Users().
// Cross-tenant.
type Users struct{ s *Store }

// Sessions are people's sign-in sessions: Store.Sessions(). Cross-tenant.
type Sessions struct{ s *Store }

// User is a person who signs in to the admin UI. Users are global; what
// they may do in a tenant comes from their Membership there.
type User struct {
	ID           string `gorm:"primaryKey"`
	Email        string
	PasswordHash string
	// SSOBypassUntil is the end of a break-glass window (parley user
	// break-glass): until then a password signs the user in even where a
	// tenant requires single sign-on.
	SSOBypassUntil *time.Time `gorm:"column:sso_bypass_until"`
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Membership gives a user a role in a tenant. A pending membership, made
// by an invite not yet accepted, grants nothing.
type Membership struct {
	TenantID  string `gorm:"primaryKey"`
	UserID    string `gorm:"primaryKey"`
	Role      string
	Pending   bool
	CreatedAt time.Time
}

// normalizeEmail makes email lookups case-insensitive on both databases.
func normalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// Create inserts u with a normalised email. A taken email is ErrConflict.
func (us Users) Create(ctx context.Context, u *User) error {
	s := us.s
	if u.ID == "" {
		u.ID = NewID(PrefixUser)
	}
	u.Email = normalizeEmail(u.Email)
	return wrap("create user", s.q(ctx).Create(u).Error)
}

// Get finds a user by id.
func (us Users) Get(ctx context.Context, id string) (*User, error) {
	s := us.s
	var u User
	if err := s.q(ctx).Where("id = ?", id).First(&u).Error; err != nil {
		return nil, wrap("get user", err)
	}
	return &u, nil
}

// ByEmail finds a user by email, ignoring case.
func (us Users) ByEmail(ctx context.Context, email string) (*User, error) {
	s := us.s
	var u User
	if err := s.q(ctx).Where("email = ?", normalizeEmail(email)).First(&u).Error; err != nil {
		return nil, wrap("get user by email", err)
	}
	return &u, nil
}

// Memberships lists every tenant role of a user, pending ones included
// (a session's principal leaves those out).
func (us Users) Memberships(ctx context.Context, userID string) ([]Membership, error) {
	s := us.s
	var rows []Membership
	if err := s.q(ctx).Where("user_id = ?", userID).Order("tenant_id").Find(&rows).Error; err != nil {
		return nil, wrap("list memberships", err)
	}
	return rows, nil
}

// Session is a signed-in admin UI user. Only the SHA-256 of the token is
// kept, so a database leak does not leak live sessions.
type Session struct {
	TokenHash string `gorm:"primaryKey"`
	UserID    string
	// Via is how the session began: SessionPassword, SessionTwoFactor,
	// SessionSSO or SessionBreakGlass.
	Via string
	// TenantID is set for a sign-in through a tenant's own provider: that
	// provider vouches for its tenant only, so the session acts there only.
	TenantID  string
	ExpiresAt time.Time
	CreatedAt time.Time
}

// How a session began.
const (
	SessionPassword   = "password"
	SessionSSO        = "sso"
	SessionBreakGlass = "break_glass"
	// SessionTwoFactor is a password and a second factor (a code from an
	// authenticator, or a recovery code).
	SessionTwoFactor = "two_factor"
)

// Create inserts a session.
func (se Sessions) Create(ctx context.Context, sess *Session) error {
	s := se.s
	return wrap("create session", s.q(ctx).Create(sess).Error)
}

// Get finds a session by token hash; an expired one is ErrNotFound.
func (se Sessions) Get(ctx context.Context, tokenHash string, now time.Time) (*Session, error) {
	s := se.s
	var sess Session
	err := s.q(ctx).Where("token_hash = ? AND expires_at > ?", tokenHash, now).First(&sess).Error
	if err != nil {
		return nil, wrap("get session", err)
	}
	return &sess, nil
}

// Delete ends a session; ending an unknown one is not an error, so
// logout is idempotent.
func (se Sessions) Delete(ctx context.Context, tokenHash string) error {
	s := se.s
	return wrap("delete session", s.q(ctx).Where("token_hash = ?", tokenHash).Delete(&Session{}).Error)
}

// DeleteExpired removes sessions that ended before now, so the table
// does not grow with every sign-in.
func (se Sessions) DeleteExpired(ctx context.Context, now time.Time) error {
	s := se.s
	return wrap("delete expired sessions", s.q(ctx).Where("expires_at <= ?", now).Delete(&Session{}).Error)
}

// DeleteAllOf ends every session of the user, as a password reset
// must.
func (se Sessions) DeleteAllOf(ctx context.Context, userID string) error {
	s := se.s
	return wrap("delete user sessions", s.q(ctx).Where("user_id = ?", userID).Delete(&Session{}).Error)
}
