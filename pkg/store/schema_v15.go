package store

import (
	"time"

	"gorm.io/gorm"
)

// The table shape of migration step 15 (memory across dialogs), frozen
// like step 1.

// v15MemoryNote is one note a bot keeps about one end user of its tenant,
// recalled in that user's later dialogs with the bot.
type v15MemoryNote struct {
	ID       string   `gorm:"primaryKey;size:64"`
	TenantID string   `gorm:"size:64;not null;uniqueIndex:ux_memory_notes_key,priority:1;index:ix_memory_notes_user,priority:1"`
	Tenant   v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	BotID    string   `gorm:"size:64;not null;uniqueIndex:ux_memory_notes_key,priority:3"`
	Bot      v1Bot    `gorm:"foreignKey:BotID;constraint:OnDelete:CASCADE"`
	UserID   string   `gorm:"size:200;not null;uniqueIndex:ux_memory_notes_key,priority:2;index:ix_memory_notes_user,priority:2"`
	Key      string   `gorm:"size:64;not null;uniqueIndex:ux_memory_notes_key,priority:4"`
	Value    string   `gorm:"type:text;not null"`
	// DialogID is the dialog that last wrote the note; no foreign key, as
	// the note outlives its dialog.
	DialogID  string    `gorm:"size:64;not null;default:''"`
	CreatedAt time.Time `gorm:"not null"`
	UpdatedAt time.Time `gorm:"not null;index:ix_memory_notes_updated"`
}

func (v15MemoryNote) TableName() string { return "memory_notes" }

func migrateV15(tx *gorm.DB) error {
	return tx.Migrator().CreateTable(&v15MemoryNote{})
}
