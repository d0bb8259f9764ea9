package store

import "gorm.io/gorm"

// migrateV23 gives tenant providers a model list (a JSON array of names),
// against which saved configs are warned about models the provider does
// not list. Existing providers get none, which checks nothing.
func migrateV23(tx *gorm.DB) error {
	return tx.Exec("ALTER TABLE providers ADD COLUMN models TEXT NOT NULL DEFAULT '[]'").Error
}
