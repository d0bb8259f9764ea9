package store

import (
	"time"

	"gorm.io/gorm"
)

// The table shape of migration step 31 (guardrails: the personal data of
// a dialog behind its placeholders), frozen like step 1.

// v31PIIVault is one dialog's placeholders and the values behind them,
// sealed by the caller like a secret. Version counts the writes, so two
// writers never overwrite each other's placeholders unseen.
type v31PIIVault struct {
	DialogID   string    `gorm:"primaryKey;size:64"`
	Dialog     v2Dialog  `gorm:"foreignKey:DialogID;constraint:OnDelete:CASCADE"`
	TenantID   string    `gorm:"size:64;not null"`
	Tenant     v1Tenant  `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Version    int64     `gorm:"not null"`
	Nonce      []byte    `gorm:"not null"`
	Ciphertext []byte    `gorm:"not null"`
	UpdatedAt  time.Time `gorm:"not null"`
}

func (v31PIIVault) TableName() string { return "pii_vaults" }

// migrateV31 creates the table of dialogs' personal data vaults.
func migrateV31(tx *gorm.DB) error {
	return tx.Migrator().CreateTable(&v31PIIVault{})
}
