package store

import (
	"time"

	"gorm.io/gorm"
)

// The table shape of migration step 21 (human handoff), frozen like step 1.

// v21DialogHandoff is a dialog waiting for, or served by, a person: one
// row while the dialog is handed off, deleted when it goes back to the bot.
type v21DialogHandoff struct {
	DialogID string   `gorm:"primaryKey;size:64"`
	Dialog   v2Dialog `gorm:"foreignKey:DialogID;constraint:OnDelete:CASCADE"`
	TenantID string   `gorm:"size:64;not null;index:ix_dialog_handoffs_wait,priority:1"`
	// RequestedAt orders the inbox: the longest wait first.
	RequestedAt time.Time `gorm:"not null;index:ix_dialog_handoffs_wait,priority:2"`
	// AssigneeID is the operator who took the dialog ("" while it waits):
	// a user id, or "key:<id>" for an API key; AssigneeName is what the
	// end user and other operators see of them.
	AssigneeID   string `gorm:"size:80;not null;default:''"`
	AssigneeName string `gorm:"size:200;not null;default:''"`
	AssignedAt   *time.Time
}

func (v21DialogHandoff) TableName() string { return "dialog_handoffs" }

// migrateV21 adds the handoff table, with a row for every dialog handed
// off before it existed (they wait since their last update).
func migrateV21(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&v21DialogHandoff{}); err != nil {
		return err
	}
	return tx.Exec(`INSERT INTO dialog_handoffs (dialog_id, tenant_id, requested_at, assignee_id, assignee_name)
SELECT id, tenant_id, updated_at, '', '' FROM dialogs WHERE status = 'handoff'`).Error
}
