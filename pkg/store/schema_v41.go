package store

import "gorm.io/gorm"

// migrateV41 gives PostgreSQL a unique index on dialogs (tenant_id, id),
// the key every statement of a turn finds its dialog by. Until PostgreSQL
// has analysed the table (a new database, for its first minute or more),
// it cannot tell that tenant_id matches nearly every row and id one, and
// it chose an index that starts with tenant_id alone (there are five),
// reading the tenant's every dialog to find one: three times a turn, so a
// turn's cost grew with the tenant's dialogs (docs/performance.md). An
// index on both columns is the cheapest plan whatever the statistics say.
// SQLite's planner already takes the primary key.
func migrateV41(tx *gorm.DB) error {
	if tx.Dialector.Name() != "postgres" {
		return nil
	}
	return tx.Exec("CREATE UNIQUE INDEX ux_dialogs_tenant_id ON dialogs (tenant_id, id)").Error
}
