package store

import (
	"time"

	"gorm.io/gorm"
)

// The table shapes of migration step 1, frozen. Change the schema with a new
// step, never by editing these.

type v1Tenant struct {
	ID        string `gorm:"primaryKey;size:64"`
	Slug      string `gorm:"size:64;not null;uniqueIndex:ux_tenants_slug"`
	Name      string `gorm:"size:200;not null"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (v1Tenant) TableName() string { return "tenants" }

type v1User struct {
	ID           string `gorm:"primaryKey;size:64"`
	Email        string `gorm:"size:320;not null;uniqueIndex:ux_users_email"`
	PasswordHash string `gorm:"size:100;not null"`
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

func (v1User) TableName() string { return "users" }

type v1Membership struct {
	TenantID  string   `gorm:"primaryKey;size:64"`
	UserID    string   `gorm:"primaryKey;size:64;index:ix_memberships_user"`
	Role      string   `gorm:"size:20;not null"`
	Tenant    v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	User      v1User   `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
	CreatedAt time.Time
}

func (v1Membership) TableName() string { return "memberships" }

type v1Session struct {
	TokenHash string `gorm:"primaryKey;size:64"`
	UserID    string `gorm:"size:64;not null;index:ix_sessions_user"`
	User      v1User `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
	ExpiresAt time.Time
	CreatedAt time.Time
}

func (v1Session) TableName() string { return "sessions" }

type v1APIKey struct {
	ID         string   `gorm:"primaryKey;size:64"`
	TenantID   string   `gorm:"size:64;not null;index:ix_api_keys_tenant"`
	Tenant     v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Name       string   `gorm:"size:200;not null"`
	Kind       string   `gorm:"size:2;not null"`
	Scopes     string   `gorm:"type:text;not null"`
	BotID      *string  `gorm:"size:64"`
	Origins    string   `gorm:"type:text;not null"`
	Hash       string   `gorm:"size:64;not null;uniqueIndex:ux_api_keys_hash"`
	Prefix     string   `gorm:"size:16;not null"`
	Last4      string   `gorm:"size:4;not null"`
	ExpiresAt  *time.Time
	RevokedAt  *time.Time
	LastUsedAt *time.Time
	CreatedAt  time.Time
}

func (v1APIKey) TableName() string { return "api_keys" }

type v1Secret struct {
	TenantID   string   `gorm:"primaryKey;size:64"`
	Name       string   `gorm:"primaryKey;size:128"`
	Tenant     v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Nonce      []byte   `gorm:"not null"`
	Ciphertext []byte   `gorm:"not null"`
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

func (v1Secret) TableName() string { return "secrets" }

type v1Bot struct {
	ID               string   `gorm:"primaryKey;size:64"`
	TenantID         string   `gorm:"size:64;not null;uniqueIndex:ux_bots_tenant_slug,priority:1"`
	Tenant           v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Slug             string   `gorm:"size:64;not null;uniqueIndex:ux_bots_tenant_slug,priority:2"`
	Name             string   `gorm:"size:200;not null"`
	PublishedVersion int      `gorm:"not null;default:0"`
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

func (v1Bot) TableName() string { return "bots" }

type v1BotVersion struct {
	ID          string `gorm:"primaryKey;size:64"`
	TenantID    string `gorm:"size:64;not null;index:ix_bot_versions_tenant"`
	BotID       string `gorm:"size:64;not null;uniqueIndex:ux_bot_versions_bot_number,priority:1"`
	Bot         v1Bot  `gorm:"foreignKey:BotID;constraint:OnDelete:CASCADE"`
	Number      int    `gorm:"not null;uniqueIndex:ux_bot_versions_bot_number,priority:2"`
	Config      string `gorm:"type:text;not null"`
	Prompt      string `gorm:"type:text;not null"`
	Fingerprint string `gorm:"size:64;not null"`
	CreatedBy   string `gorm:"size:64;not null"`
	CreatedAt   time.Time
}

func (v1BotVersion) TableName() string { return "bot_versions" }

func migrateV1(tx *gorm.DB) error {
	// Parents before children, so foreign keys have something to point at.
	return tx.Migrator().CreateTable(
		&v1Tenant{}, &v1User{}, &v1Membership{}, &v1Session{},
		&v1APIKey{}, &v1Secret{}, &v1Bot{}, &v1BotVersion{},
	)
}
