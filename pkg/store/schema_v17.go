package store

import "gorm.io/gorm"

// migrateV17 gives webhook endpoints a description: what the receiver is,
// for the people who manage them (the admin UI, webhooks.json).
func migrateV17(tx *gorm.DB) error {
	return tx.Exec("ALTER TABLE webhook_endpoints ADD COLUMN description TEXT NOT NULL DEFAULT ''").Error
}
