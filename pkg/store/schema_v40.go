package store

import "gorm.io/gorm"

// migrateV40 gives dialogs followed_until: until when a live stream
// follows the dialog (Dialogs.Follow), NULL when none ever did. A save
// tells the streams in other processes only while it is in the future.
func migrateV40(tx *gorm.DB) error {
	ts := "TIMESTAMP"
	if tx.Dialector.Name() == "postgres" {
		ts = "TIMESTAMPTZ"
	}
	return tx.Exec("ALTER TABLE dialogs ADD COLUMN followed_until " + ts).Error
}
