package store

import (
	"time"

	"gorm.io/gorm"
)

// The table shapes of migration step 34 (single sign-on), frozen like
// step 1.

// v34TenantSSO is a tenant's own OpenID Connect provider: its issuer, the
// client Parley is registered as there (the secret sealed by the caller),
// just-in-time membership (a default role, "" for none, and the email
// domains it admits as a JSON array) and whether the tenant's members must
// sign in through it.
type v34TenantSSO struct {
	TenantID       string   `gorm:"primaryKey;size:64"`
	Tenant         v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Issuer         string   `gorm:"not null"`
	ClientID       string   `gorm:"not null"`
	Nonce          []byte
	Ciphertext     []byte
	DefaultRole    string `gorm:"not null;default:''"`
	AllowedDomains string `gorm:"not null;default:'[]'"`
	RequireSSO     bool   `gorm:"column:require_sso;not null;default:false"`
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

func (v34TenantSSO) TableName() string { return "tenant_sso" }

// v34OIDCLogin is one sign-in under way at a provider: found by the hash
// of its state, used once. TenantID is "" for the operator's provider.
type v34OIDCLogin struct {
	StateHash string    `gorm:"primaryKey;size:64"`
	TenantID  string    `gorm:"size:64;not null;default:''"`
	Nonce     string    `gorm:"not null"`
	Verifier  string    `gorm:"not null"`
	ExpiresAt time.Time `gorm:"not null;index"`
	CreatedAt time.Time
}

func (v34OIDCLogin) TableName() string { return "oidc_logins" }

// v34User adds the break-glass window: until then the user may sign in
// with a password even where a tenant requires single sign-on.
type v34User struct {
	SSOBypassUntil *time.Time `gorm:"column:sso_bypass_until"`
}

func (v34User) TableName() string { return "users" }

// v34Session says how a session began: "password", "sso" or
// "break_glass", and for a sign-in through a tenant's own provider, that
// tenant, the only one the session may act in.
type v34Session struct {
	Via      string `gorm:"not null;default:'password'"`
	TenantID string `gorm:"size:64;not null;default:''"`
}

func (v34Session) TableName() string { return "sessions" }

// migrateV34 creates the single sign-on tables, the break-glass column
// and how sessions began.
func migrateV34(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&v34TenantSSO{}, &v34OIDCLogin{}); err != nil {
		return err
	}
	if err := tx.Migrator().AddColumn(&v34User{}, "SSOBypassUntil"); err != nil {
		return err
	}
	for _, col := range []string{"Via", "TenantID"} {
		if err := tx.Migrator().AddColumn(&v34Session{}, col); err != nil {
			return err
		}
	}
	return nil
}
