package store

import "gorm.io/gorm"

// migrateV16 records on each outbox event the dialog it reports, so
// erasing a dialog (DeleteDialog, EraseEndUser, retention) deletes its
// events too: their bodies carry the dialog's messages. Events written
// before this step learn their dialog from their body.
func migrateV16(tx *gorm.DB) error {
	dialogOf := "COALESCE(json_extract(body, '$.data.dialog_id'), json_extract(body, '$.data.dialog.id'), '')"
	if tx.Dialector.Name() == "postgres" {
		dialogOf = "COALESCE(body::jsonb #>> '{data,dialog_id}', body::jsonb #>> '{data,dialog,id}', '')"
	}
	for _, q := range []string{
		"ALTER TABLE webhook_events ADD COLUMN dialog_id VARCHAR(64) NOT NULL DEFAULT ''",
		"UPDATE webhook_events SET dialog_id = " + dialogOf,
		"CREATE INDEX ix_webhook_events_dialog ON webhook_events (tenant_id, dialog_id) WHERE dialog_id <> ''",
	} {
		if err := tx.Exec(q).Error; err != nil {
			return err
		}
	}
	return nil
}
