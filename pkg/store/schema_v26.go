package store

import "gorm.io/gorm"

// migrateV26 gives the feedback.created events written without their
// dialog (before the runtime set it) the dialog their body names, as step
// 16 did for the other events: their bodies quote the end user's comment
// and name the user, so erasure must find them.
func migrateV26(tx *gorm.DB) error {
	dialogOf := "COALESCE(json_extract(body, '$.data.dialog_id'), '')"
	if tx.Dialector.Name() == "postgres" {
		dialogOf = "COALESCE(body::jsonb #>> '{data,dialog_id}', '')"
	}
	return tx.Exec("UPDATE webhook_events SET dialog_id = " + dialogOf + " WHERE dialog_id = '' AND type = 'feedback.created'").Error
}
