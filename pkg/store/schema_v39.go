package store

import (
	"time"

	"gorm.io/gorm"
)

// The shapes of migration step 39 (read marks both ways in a dialog, and
// the handoff's waiting times in the analytics rollups), frozen like
// step 1.

// v39DialogRead is how far one side of a dialog (its end user, or its
// operators) has read it: the seq of the newest message it has seen.
type v39DialogRead struct {
	TenantID string    `gorm:"size:64;not null;index:idx_dialog_reads_tenant"`
	Tenant   v1Tenant  `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	DialogID string    `gorm:"primaryKey;size:64"`
	Dialog   v2Dialog  `gorm:"foreignKey:DialogID;constraint:OnDelete:CASCADE"`
	Side     string    `gorm:"primaryKey;size:16"`
	Seq      int64     `gorm:"not null"`
	ReadAt   time.Time `gorm:"not null"`
}

func (v39DialogRead) TableName() string { return "dialog_reads" }

// v39Rollup adds the time handed-off dialogs waited until an operator
// took them, summed with how many it adds up and counted in buckets (up
// to 30 s, 1 min, 2 min, 5 min, 15 min, 1 h, 24 h: a median per period),
// and the time operators took to answer each message the end user wrote
// during a handoff, summed with how many it adds up.
type v39Rollup struct {
	TakeMS          int64 `gorm:"column:take_ms;not null;default:0"`
	Takes           int64 `gorm:"not null;default:0"`
	TakeLE30s       int64 `gorm:"column:take_le_30s;not null;default:0"`
	TakeLE1m        int64 `gorm:"column:take_le_1m;not null;default:0"`
	TakeLE2m        int64 `gorm:"column:take_le_2m;not null;default:0"`
	TakeLE5m        int64 `gorm:"column:take_le_5m;not null;default:0"`
	TakeLE15m       int64 `gorm:"column:take_le_15m;not null;default:0"`
	TakeLE1h        int64 `gorm:"column:take_le_1h;not null;default:0"`
	TakeLE24h       int64 `gorm:"column:take_le_24h;not null;default:0"`
	OperatorReplyMS int64 `gorm:"column:operator_reply_ms;not null;default:0"`
	OperatorReplies int64 `gorm:"not null;default:0"`
}

func (v39Rollup) TableName() string { return "analytics_hourly" }

// migrateV39 creates the read marks' table and adds the waiting times'
// columns to the rollups.
func migrateV39(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&v39DialogRead{}); err != nil {
		return err
	}
	for _, col := range []string{"take_ms", "takes", "take_le_30s", "take_le_1m", "take_le_2m", "take_le_5m", "take_le_15m",
		"take_le_1h", "take_le_24h", "operator_reply_ms", "operator_replies"} {
		if err := tx.Migrator().AddColumn(&v39Rollup{}, col); err != nil {
			return err
		}
	}
	return nil
}
