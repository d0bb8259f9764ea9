package store

import "gorm.io/gorm"

// migrateV19 links a sub-run's dialog to the dialog and tool call that
// started it (an agents tool, docs/agent-config.md), so the parent's
// transcript can list its sub-runs.
func migrateV19(tx *gorm.DB) error {
	for _, stmt := range []string{
		"ALTER TABLE dialogs ADD COLUMN parent_dialog_id VARCHAR(64) NOT NULL DEFAULT ''",
		"ALTER TABLE dialogs ADD COLUMN parent_call_id VARCHAR(200) NOT NULL DEFAULT ''",
		"CREATE INDEX ix_dialogs_parent ON dialogs (tenant_id, parent_dialog_id)",
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
