package store

import (
	"time"

	"gorm.io/gorm"
)

// The table shape of migration step 35 (autosaved config drafts), frozen
// like step 1.

// v35BotDraft is one person's unsaved config of one bot: the console
// saves it as they type, so a closed tab or another browser loses nothing.
// Owner is who wrote it (a user id, a key id, or "platform").
type v35BotDraft struct {
	TenantID  string   `gorm:"primaryKey;size:64"`
	Tenant    v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	BotID     string   `gorm:"primaryKey;size:64"`
	Bot       v1Bot    `gorm:"foreignKey:BotID;constraint:OnDelete:CASCADE"`
	Owner     string   `gorm:"primaryKey;size:64"`
	Config    string   `gorm:"type:text;not null"`
	Tests     string   `gorm:"type:text;not null"`
	UpdatedAt time.Time
}

func (v35BotDraft) TableName() string { return "bot_drafts" }

// migrateV35 creates the table of drafts.
func migrateV35(tx *gorm.DB) error {
	return tx.Migrator().CreateTable(&v35BotDraft{})
}
