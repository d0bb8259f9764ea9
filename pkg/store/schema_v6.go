package store

import (
	"time"

	"gorm.io/gorm"
)

// v6TenantIdentity is the tenant_identities table as step 6 creates it.
type v6TenantIdentity struct {
	TenantID   string   `gorm:"primaryKey;size:64"`
	Tenant     v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Nonce      []byte
	Ciphertext []byte
	JWKSURL    string `gorm:"column:jwks_url;size:2048;not null"`
	Audience   string `gorm:"size:256;not null"`
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

func (v6TenantIdentity) TableName() string { return "tenant_identities" }

// migrateV6 adds how each tenant's signed end-user tokens are verified: a
// sealed HS256 secret or a JWKS URL, and the audience tokens must name.
func migrateV6(tx *gorm.DB) error {
	return tx.Migrator().CreateTable(&v6TenantIdentity{})
}
