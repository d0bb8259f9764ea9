package store

import "gorm.io/gorm"

// migrateV9 keeps why a dialog was closed: by the bot's end_dialog tool, an
// operator or the API (CloseDialog).
func migrateV9(tx *gorm.DB) error {
	return tx.Exec("ALTER TABLE dialogs ADD COLUMN closed_reason TEXT NOT NULL DEFAULT ''").Error
}
