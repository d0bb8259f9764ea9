package store

import "gorm.io/gorm"

// migrateV8 stores a version's conversation tests beside its config,
// whether a bot may only publish versions whose tests pass, and its canary:
// a candidate version that takes a share of new dialogs.
func migrateV8(tx *gorm.DB) error {
	for _, stmt := range []string{
		"ALTER TABLE bot_versions ADD COLUMN tests TEXT NOT NULL DEFAULT ''",
		"ALTER TABLE bots ADD COLUMN require_passing_tests BOOLEAN NOT NULL DEFAULT false",
		"ALTER TABLE bots ADD COLUMN canary_version INTEGER NOT NULL DEFAULT 0",
		"ALTER TABLE bots ADD COLUMN canary_percent INTEGER NOT NULL DEFAULT 0",
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
