package store

import "gorm.io/gorm"

// The column shape of migration step 37 (operator first response in
// the analytics rollups), frozen like step 1.

// v37Rollup adds the time operators took to first answer handed-off
// dialogs, summed, and how many first answers it adds up.
type v37Rollup struct {
	OperatorResponseMS int64 `gorm:"column:operator_response_ms;not null;default:0"`
	OperatorResponses  int64 `gorm:"not null;default:0"`
}

func (v37Rollup) TableName() string { return "analytics_hourly" }

func migrateV37(tx *gorm.DB) error {
	for _, col := range []string{"OperatorResponseMS", "OperatorResponses"} {
		if err := tx.Migrator().AddColumn(&v37Rollup{}, col); err != nil {
			return err
		}
	}
	return nil
}
