package store

import (
	"context"
	"time"
)

// TwoFactor is people's second factors (an authenticator secret and
// recovery codes) and the password sign-ins waiting for one:
// Store.TwoFactor(). Cross-tenant: a second factor is the person's.
type TwoFactor struct{ s *Store }

// UserTOTP is a user's authenticator secret, sealed by the caller.
// EnabledAt is nil while enrolment waits for the first code; LastStep is
// the last time step whose code was accepted.
type UserTOTP struct {
	UserID     string `gorm:"primaryKey"`
	Nonce      []byte
	Ciphertext []byte
	EnabledAt  *time.Time
	LastStep   int64
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// TableName is user_totp.
func (UserTOTP) TableName() string { return "user_totp" }

// RecoveryCode is one of a user's one-time recovery codes, by hash.
type RecoveryCode struct {
	UserID   string `gorm:"primaryKey"`
	CodeHash string `gorm:"primaryKey"`
	UsedAt   *time.Time
}

// TableName is recovery_codes.
func (RecoveryCode) TableName() string { return "recovery_codes" }

// SignInChallenge is a password sign-in waiting for its second step, by
// the hash of its token.
type SignInChallenge struct {
	TokenHash string `gorm:"primaryKey"`
	UserID    string
	// Purpose is ChallengeCode or ChallengeEnrol.
	Purpose string
	// Via is how the session will be marked (SessionTwoFactor or
	// SessionBreakGlass).
	Via       string
	ExpiresAt time.Time
	CreatedAt time.Time
}

// TableName is sign_in_challenges.
func (SignInChallenge) TableName() string { return "sign_in_challenges" }

// What a sign-in challenge waits for.
const (
	ChallengeCode  = "code"
	ChallengeEnrol = "enrol"
)

// TOTP returns the user's authenticator secret; ErrNotFound when none.
func (tf TwoFactor) TOTP(ctx context.Context, userID string) (UserTOTP, error) {
	var t UserTOTP
	err := tf.s.q(ctx).Where("user_id = ?", userID).Take(&t).Error
	return t, wrap("get totp", err)
}

// StartEnrolment saves a new, not yet enabled secret for the user,
// replacing an enrolment under way; an enabled secret is ErrConflict.
func (tf TwoFactor) StartEnrolment(ctx context.Context, t *UserTOTP) error {
	s := tf.s
	return wrap("start totp enrolment", s.Tx(ctx, func(tx *Store) error {
		if err := tx.q(ctx).Where("user_id = ? AND enabled_at IS NULL", t.UserID).Delete(&UserTOTP{}).Error; err != nil {
			return err
		}
		now := s.db.NowFunc()
		t.EnabledAt, t.LastStep, t.CreatedAt, t.UpdatedAt = nil, 0, now, now
		return tx.q(ctx).Create(t).Error
	}))
}

// Enable turns the user's secret on with the step of the code that
// confirmed it, and replaces their recovery codes; a secret already on, or
// none, is ErrNotFound.
func (tf TwoFactor) Enable(ctx context.Context, userID string, step int64, codeHashes []string) error {
	s := tf.s
	return wrap("enable totp", s.Tx(ctx, func(tx *Store) error {
		now := s.db.NowFunc()
		res := tx.q(ctx).Model(&UserTOTP{}).Where("user_id = ? AND enabled_at IS NULL", userID).
			Updates(map[string]any{"enabled_at": now, "last_step": step, "updated_at": now})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		if err := tx.q(ctx).Where("user_id = ?", userID).Delete(&RecoveryCode{}).Error; err != nil {
			return err
		}
		codes := make([]RecoveryCode, len(codeHashes))
		for i, h := range codeHashes {
			codes[i] = RecoveryCode{UserID: userID, CodeHash: h}
		}
		return tx.q(ctx).Create(&codes).Error
	}))
}

// Disable removes the user's secret and recovery codes; none is
// ErrNotFound.
func (tf TwoFactor) Disable(ctx context.Context, userID string) error {
	s := tf.s
	return wrap("disable totp", s.Tx(ctx, func(tx *Store) error {
		if err := tx.q(ctx).Where("user_id = ?", userID).Delete(&RecoveryCode{}).Error; err != nil {
			return err
		}
		res := tx.q(ctx).Where("user_id = ?", userID).Delete(&UserTOTP{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		return nil
	}))
}

// AcceptStep records that a code of this time step signed the user in,
// and reports false when a code of this step or a later one already did:
// one conditional update, so two requests racing with one code cannot
// both win.
func (tf TwoFactor) AcceptStep(ctx context.Context, userID string, step int64) (bool, error) {
	res := tf.s.q(ctx).Model(&UserTOTP{}).Where("user_id = ? AND enabled_at IS NOT NULL AND last_step < ?", userID, step).
		Updates(map[string]any{"last_step": step, "updated_at": tf.s.db.NowFunc()})
	return res.RowsAffected == 1, wrap("accept totp step", res.Error)
}

// UseRecoveryCode marks the user's unused recovery code with this hash
// used, and reports false when there is none.
func (tf TwoFactor) UseRecoveryCode(ctx context.Context, userID, codeHash string, now time.Time) (bool, error) {
	res := tf.s.q(ctx).Model(&RecoveryCode{}).Where("user_id = ? AND code_hash = ? AND used_at IS NULL", userID, codeHash).
		Update("used_at", now)
	return res.RowsAffected == 1, wrap("use recovery code", res.Error)
}

// RecoveryCodesLeft counts the user's unused recovery codes.
func (tf TwoFactor) RecoveryCodesLeft(ctx context.Context, userID string) (int64, error) {
	var n int64
	err := tf.s.q(ctx).Model(&RecoveryCode{}).Where("user_id = ? AND used_at IS NULL", userID).Count(&n).Error
	return n, wrap("count recovery codes", err)
}

// CreateChallenge records a sign-in waiting for its second step, pruning
// expired ones.
func (tf TwoFactor) CreateChallenge(ctx context.Context, c *SignInChallenge) error {
	s := tf.s
	if err := s.q(ctx).Where("expires_at <= ?", s.db.NowFunc()).Delete(&SignInChallenge{}).Error; err != nil {
		return wrap("prune sign-in challenges", err)
	}
	c.CreatedAt = s.db.NowFunc()
	return wrap("create sign-in challenge", s.q(ctx).Create(c).Error)
}

// Challenge returns the sign-in challenge with this token hash; an
// unknown, used or expired one is ErrNotFound.
func (tf TwoFactor) Challenge(ctx context.Context, tokenHash string, now time.Time) (SignInChallenge, error) {
	var c SignInChallenge
	err := tf.s.q(ctx).Where("token_hash = ? AND expires_at > ?", tokenHash, now).Take(&c).Error
	return c, wrap("get sign-in challenge", err)
}

// TakeChallenge deletes the challenge, so it gives one session even to
// two requests racing; one already taken is ErrNotFound.
func (tf TwoFactor) TakeChallenge(ctx context.Context, tokenHash string) error {
	res := tf.s.q(ctx).Where("token_hash = ?", tokenHash).Delete(&SignInChallenge{})
	if res.Error != nil {
		return wrap("take sign-in challenge", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("take sign-in challenge", ErrNotFound)
	}
	return nil
}

// RequiringTwoFactor returns which of these tenants require a second
// factor of password sign-ins.
func (us Users) RequiringTwoFactor(ctx context.Context, tenantIDs []string) ([]string, error) {
	var ids []string
	if len(tenantIDs) == 0 {
		return ids, nil
	}
	err := us.s.q(ctx).Model(&Tenant{}).Where("id IN ? AND require_two_factor", tenantIDs).Order("id").Pluck("id", &ids).Error
	return ids, wrap("tenants requiring two-factor", err)
}
