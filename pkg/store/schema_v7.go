package store

import "gorm.io/gorm"

// migrateV7 adds each tenant's retention period: dialogs inactive for
// that many days are deleted; 0 keeps them.
func migrateV7(tx *gorm.DB) error {
	return tx.Exec("ALTER TABLE tenants ADD COLUMN retention_days INTEGER NOT NULL DEFAULT 0").Error
}
