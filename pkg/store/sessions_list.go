package store

import (
	"context"
	"time"
)

// SessionIDLen is how many hex digits of a session's token hash name it:
// 64 bits, unique among one user's sessions, and no use for signing in
// (the hash is not the token).
const SessionIDLen = 16

// ID names the session in lists and routes.
func (sess Session) ID() string { return sess.TokenHash[:min(SessionIDLen, len(sess.TokenHash))] }

// ListOf returns the user's sessions that have not expired, newest first.
func (se Sessions) ListOf(ctx context.Context, userID string, now time.Time) ([]Session, error) {
	s := se.s
	var rows []Session
	err := s.q(ctx).Where("user_id = ? AND expires_at > ?", userID, now).Order("created_at DESC").Find(&rows).Error
	return rows, wrap("list sessions", err)
}

// DeleteOf ends the user's session with this id (Session.ID); another
// user's, or an unknown one, is ErrNotFound.
func (se Sessions) DeleteOf(ctx context.Context, userID, id string) error {
	s := se.s
	if !isSessionID(id) {
		return wrap("end session", ErrNotFound)
	}
	res := s.q(ctx).Where("user_id = ? AND token_hash LIKE ?", userID, id+"%").Delete(&Session{})
	if res.Error != nil {
		return wrap("end session", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("end session", ErrNotFound)
	}
	return nil
}

// CountOf counts the user's sessions, expired ones included.
func (se Sessions) CountOf(ctx context.Context, userID string) (int64, error) {
	s := se.s
	var n int64
	err := s.q(ctx).Model(&Session{}).Where("user_id = ?", userID).Count(&n).Error
	return n, wrap("count sessions", err)
}

// isSessionID keeps LIKE's wildcards out: an id is lower-case hex.
func isSessionID(id string) bool {
	if len(id) != SessionIDLen {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// SetVia marks the user's session with this id (Session.ID) as begun
// another way: a password session whose user just proved a second factor.
func (se Sessions) SetVia(ctx context.Context, userID, id, via string) error {
	s := se.s
	if !isSessionID(id) {
		return wrap("mark session", ErrNotFound)
	}
	err := s.q(ctx).Model(&Session{}).Where("user_id = ? AND token_hash LIKE ?", userID, id+"%").Update("via", via).Error
	return wrap("mark session", err)
}
