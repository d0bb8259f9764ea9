package store

import "gorm.io/gorm"

// migrateV27 keeps the whole value of publishable (pk_) keys, so the
// admin UI can show one again: a pk_ key is public by design, written into
// the pages of the site it serves. Server (sk_) keys stay stored as their
// hash only; their column is empty. pk_ keys made before this step have
// none either, and are shown as prefix and last four, as before.
func migrateV27(tx *gorm.DB) error {
	return tx.Exec("ALTER TABLE api_keys ADD COLUMN publishable TEXT NOT NULL DEFAULT ''").Error
}
