package store

import "gorm.io/gorm"

// migrateV3 drops the tenant-only indexes of messages and tool calls.
// Every query of those tables names a dialog, whose own index finds its
// rows directly; beside it, PostgreSQL's planner, misled by statistics
// gathered while a tenant was small, combined the two indexes and read
// every message of the tenant to find one dialog's (a millisecond per
// statement at 20,000 messages, growing with the tenant). Each insert
// also paid for maintaining them.
func migrateV3(tx *gorm.DB) error {
	for _, index := range []string{"ix_messages_tenant", "ix_tool_calls_tenant"} {
		// The same statement on PostgreSQL and SQLite; index names are
		// unique per schema on both.
		if err := tx.Exec("DROP INDEX " + index).Error; err != nil {
			return err
		}
	}
	return nil
}
