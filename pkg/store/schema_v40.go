package store

import (
	"time"

	"gorm.io/gorm"
)

// The shapes of migration step 40 (read marks both ways in a dialog, and
// the handoff's waiting times in the analytics rollups), frozen like
// step 1.

// v40DialogRead is how far one side of a dialog (its end user, or its
// operators) has read it: the seq of the newest message it has seen.
type v40DialogRead struct {
	TenantID string    `gorm:"size:64;not null;index:idx_dialog_reads_tenant"`
	Tenant   v1Tenant  `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	DialogID string    `gorm:"primaryKey;size:64"`
	Dialog   v2Dialog  `gorm:"foreignKey:DialogID;constraint:OnDelete:CASCADE"`
	Side     string    `gorm:"primaryKey;size:16"`
	Seq      int64     `gorm:"not null"`
	ReadAt   time.Time `gorm:"not null"`
}

func (v40DialogRead) TableName() string { return "dialog_reads" }

// v40Rollup adds the time handed-off dialogs waited until an operator
// took them, and the time operators took to answer each message the end
// user wrote during a handoff, each summed with how many it adds up.
type v40Rollup struct {
	TakeMS          int64 `gorm:"column:take_ms;not null;default:0"`
	Takes           int64 `gorm:"not null;default:0"`
	OperatorReplyMS int64 `gorm:"column:operator_reply_ms;not null;default:0"`
	OperatorReplies int64 `gorm:"not null;default:0"`
}

func (v40Rollup) TableName() string { return "analytics_hourly" }

// migrateV40 creates the read marks' table and adds the waiting times'
// columns to the rollups.
func migrateV40(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&v40DialogRead{}); err != nil {
		return err
	}
	for _, col := range []string{"TakeMS", "Takes", "OperatorReplyMS", "OperatorReplies"} {
		if err := tx.Migrator().AddColumn(&v40Rollup{}, col); err != nil {
			return err
		}
	}
	return nil
}
