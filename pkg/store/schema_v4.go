package store

import "gorm.io/gorm"

// migrateV4 indexes the messages still streaming. Every run, as it takes
// a dialog's lease, marks what a dead run left streaming interrupted;
// without this index that looked at every message of the dialog, a cost
// per turn that grew with the conversation. Partial, it holds only the
// few rows streaming at any moment, on PostgreSQL and SQLite alike.
func migrateV4(tx *gorm.DB) error {
	return tx.Exec("CREATE INDEX ix_messages_streaming ON messages (dialog_id) WHERE status = 'streaming'").Error
}
