package store

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm/clause"
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
	CreatedAt    time.Time
	UpdatedAt    time.Time
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

// CreateUser inserts u with a normalised email. A taken email is ErrConflict.
func (s *Store) CreateUser(ctx context.Context, u *User) error {
	if u.ID == "" {
		u.ID = NewID(PrefixUser)
	}
	u.Email = normalizeEmail(u.Email)
	return wrap("create user", s.q(ctx).Create(u).Error)
}

// GetUser finds a user by id.
func (s *Store) GetUser(ctx context.Context, id string) (*User, error) {
	var u User
	if err := s.q(ctx).Where("id = ?", id).First(&u).Error; err != nil {
		return nil, wrap("get user", err)
	}
	return &u, nil
}

// GetUserByEmail finds a user by email, ignoring case.
func (s *Store) GetUserByEmail(ctx context.Context, email string) (*User, error) {
	var u User
	if err := s.q(ctx).Where("email = ?", normalizeEmail(email)).First(&u).Error; err != nil {
		return nil, wrap("get user by email", err)
	}
	return &u, nil
}

// PutMembership gives userID the role in tenantID, replacing an earlier role
// (an upsert, safe against concurrent calls).
func (s *Store) PutMembership(ctx context.Context, tenantID, userID, role string) (*Membership, error) {
	m := Membership{TenantID: tenantID, UserID: userID, Role: role}
	err := s.q(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "tenant_id"}, {Name: "user_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"role"}),
	}).Create(&m).Error
	if err != nil {
		return nil, wrap("put membership", err)
	}
	return &m, nil
}

// Memberships lists every tenant role of a user, pending ones included
// (a session's principal leaves those out).
func (s *Store) Memberships(ctx context.Context, userID string) ([]Membership, error) {
	var rows []Membership
	if err := s.q(ctx).Where("user_id = ?", userID).Order("tenant_id").Find(&rows).Error; err != nil {
		return nil, wrap("list memberships", err)
	}
	return rows, nil
}

// ListMembers lists the memberships of one tenant.
func (s *Store) ListMembers(ctx context.Context, tenantID string) ([]Membership, error) {
	var rows []Membership
	if err := s.q(ctx).Where("tenant_id = ?", tenantID).Order("user_id").Find(&rows).Error; err != nil {
		return nil, wrap("list members", err)
	}
	return rows, nil
}

// Session is a signed-in admin UI user. Only the SHA-256 of the token is
// kept, so a database leak does not leak live sessions.
type Session struct {
	TokenHash string `gorm:"primaryKey"`
	UserID    string
	ExpiresAt time.Time
	CreatedAt time.Time
}

// CreateSession inserts a session.
func (s *Store) CreateSession(ctx context.Context, sess *Session) error {
	return wrap("create session", s.q(ctx).Create(sess).Error)
}

// GetSession finds a session by token hash; an expired one is ErrNotFound.
func (s *Store) GetSession(ctx context.Context, tokenHash string, now time.Time) (*Session, error) {
	var sess Session
	err := s.q(ctx).Where("token_hash = ? AND expires_at > ?", tokenHash, now).First(&sess).Error
	if err != nil {
		return nil, wrap("get session", err)
	}
	return &sess, nil
}

// DeleteSession ends a session; ending an unknown one is not an error, so
// logout is idempotent.
func (s *Store) DeleteSession(ctx context.Context, tokenHash string) error {
	return wrap("delete session", s.q(ctx).Where("token_hash = ?", tokenHash).Delete(&Session{}).Error)
}

// DeleteExpiredSessions removes sessions that ended before now, so the table
// does not grow with every sign-in.
func (s *Store) DeleteExpiredSessions(ctx context.Context, now time.Time) error {
	return wrap("delete expired sessions", s.q(ctx).Where("expires_at <= ?", now).Delete(&Session{}).Error)
}

// DeleteUserSessions ends every session of the user, as a password reset
// must.
func (s *Store) DeleteUserSessions(ctx context.Context, userID string) error {
	return wrap("delete user sessions", s.q(ctx).Where("user_id = ?", userID).Delete(&Session{}).Error)
}
