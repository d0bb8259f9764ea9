package store

import (
	"time"

	"gorm.io/gorm"
)

// The table shape of migration step 36 (the inbox: operators' internal
// notes on a dialog), frozen like step 1.

// v36DialogNote is a member's internal note on a dialog, never shown to
// the end user.
type v36DialogNote struct {
	ID         string    `gorm:"primaryKey;size:64"`
	TenantID   string    `gorm:"size:64;not null;index:idx_dialog_notes_dialog,priority:1"`
	Tenant     v1Tenant  `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	DialogID   string    `gorm:"size:64;not null;index:idx_dialog_notes_dialog,priority:2"`
	Dialog     v2Dialog  `gorm:"foreignKey:DialogID;constraint:OnDelete:CASCADE"`
	AuthorID   string    `gorm:"size:128;not null"`
	AuthorName string    `gorm:"size:200;not null"`
	Text       string    `gorm:"not null"`
	CreatedAt  time.Time `gorm:"not null;index:idx_dialog_notes_dialog,priority:3"`
}

func (v36DialogNote) TableName() string { return "dialog_notes" }

// migrateV36 creates the table of dialogs' internal notes.
func migrateV36(tx *gorm.DB) error {
	return tx.Migrator().CreateTable(&v36DialogNote{})
}
