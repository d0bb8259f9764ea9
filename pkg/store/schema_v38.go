package store

import (
	"time"

	"gorm.io/gorm"
)

// The table shapes of migration step 38 (two-factor sign-in), frozen like
// step 1.

// v38UserTOTP is a user's authenticator secret, sealed by the caller.
// EnabledAt is nil while enrolment waits for its first code; LastStep is
// the last 30-second step whose code was accepted, so a code is used once.
type v38UserTOTP struct {
	UserID     string `gorm:"primaryKey;size:64"`
	User       v1User `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
	Nonce      []byte `gorm:"not null"`
	Ciphertext []byte `gorm:"not null"`
	EnabledAt  *time.Time
	LastStep   int64 `gorm:"not null;default:0"`
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

func (v38UserTOTP) TableName() string { return "user_totp" }

// v38RecoveryCode is one of a user's one-time recovery codes, by hash.
type v38RecoveryCode struct {
	UserID   string `gorm:"primaryKey;size:64"`
	User     v1User `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
	CodeHash string `gorm:"primaryKey;size:64"`
	UsedAt   *time.Time
}

func (v38RecoveryCode) TableName() string { return "recovery_codes" }

// v38SignInChallenge is a password sign-in waiting for its second step:
// found by the hash of its token, used once. Purpose is "code" (type a
// code) or "enrol" (set two-factor up first); Via is how the session will
// be marked.
type v38SignInChallenge struct {
	TokenHash string    `gorm:"primaryKey;size:64"`
	UserID    string    `gorm:"size:64;not null"`
	User      v1User    `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
	Purpose   string    `gorm:"size:10;not null"`
	Via       string    `gorm:"size:20;not null"`
	ExpiresAt time.Time `gorm:"not null;index"`
	CreatedAt time.Time
}

func (v38SignInChallenge) TableName() string { return "sign_in_challenges" }

// v38Tenant adds whether members signing in with a password need a
// second factor.
type v38Tenant struct {
	RequireTwoFactor bool `gorm:"not null;default:false"`
}

func (v38Tenant) TableName() string { return "tenants" }

// migrateV38 creates the two-factor tables and the tenant's requirement.
func migrateV38(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&v38UserTOTP{}, &v38RecoveryCode{}, &v38SignInChallenge{}); err != nil {
		return err
	}
	return tx.Migrator().AddColumn(&v38Tenant{}, "RequireTwoFactor")
}
