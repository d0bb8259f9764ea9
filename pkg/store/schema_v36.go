package store

import (
	"time"

	"gorm.io/gorm"
)

// The table shapes of migration step 36 (the inbox: operators' internal
// notes on a dialog, the support team's canned replies), frozen like step 1.

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

// v36CannedReply is a tenant's canned reply, inserted by its shortcut.
type v36CannedReply struct {
	ID        string    `gorm:"primaryKey;size:64"`
	TenantID  string    `gorm:"size:64;not null;uniqueIndex:idx_canned_replies_shortcut,priority:1"`
	Tenant    v1Tenant  `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Shortcut  string    `gorm:"size:64;not null;uniqueIndex:idx_canned_replies_shortcut,priority:2"`
	Text      string    `gorm:"not null"`
	CreatedAt time.Time `gorm:"not null"`
	UpdatedAt time.Time `gorm:"not null"`
}

func (v36CannedReply) TableName() string { return "canned_replies" }

// migrateV36 creates the tables of dialogs' internal notes and of canned
// replies.
func migrateV36(tx *gorm.DB) error {
	return tx.Migrator().CreateTable(&v36DialogNote{}, &v36CannedReply{})
}
