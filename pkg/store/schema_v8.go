package store

import "gorm.io/gorm"

// migrateV8 stores a version's conversation tests beside its config, and
// whether a bot may only publish versions whose tests pass.
func migrateV8(tx *gorm.DB) error {
	for _, stmt := range []string{
		"ALTER TABLE bot_versions ADD COLUMN tests TEXT NOT NULL DEFAULT ''",
		"ALTER TABLE bots ADD COLUMN require_passing_tests BOOLEAN NOT NULL DEFAULT false",
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
