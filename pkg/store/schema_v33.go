package store

import "gorm.io/gorm"

// The table shape of migration step 33 (analytics rollups), frozen like
// step 1.

// v33Rollup is what one tenant's bot version did on one channel in one
// UTC hour: the counters analytics add up instead of scanning dialogs
// and messages. Outcomes and ratings count in the hour their dialog
// started; turns, latencies, tools and cost in the hour they happened.
type v33Rollup struct {
	TenantID      string   `gorm:"primaryKey;size:64"`
	Tenant        v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Hour          string   `gorm:"primaryKey;size:13"`
	BotID         string   `gorm:"primaryKey;size:64"`
	VersionNumber int      `gorm:"primaryKey;autoIncrement:false"`
	Channel       string   `gorm:"primaryKey;size:32"`

	Dialogs   int64 `gorm:"not null;default:0"`
	Resolved  int64 `gorm:"not null;default:0"`
	HandedOff int64 `gorm:"not null;default:0"`
	Abandoned int64 `gorm:"not null;default:0"`
	Failed    int64 `gorm:"not null;default:0"`
	Ratings   int64 `gorm:"not null;default:0"`
	RatingSum int64 `gorm:"not null;default:0"`
	Satisfied int64 `gorm:"not null;default:0"`

	Replies         int64 `gorm:"not null;default:0"`
	FirstResponseMS int64 `gorm:"column:first_response_ms;not null;default:0"`
	FirstResponses  int64 `gorm:"not null;default:0"`
	ReplyMS         int64 `gorm:"column:reply_ms;not null;default:0"`
	ToolCalls       int64 `gorm:"not null;default:0"`
	ToolFailures    int64 `gorm:"not null;default:0"`
	KnowledgeSearch int64 `gorm:"column:knowledge_searches;not null;default:0"`
	KnowledgeHits   int64 `gorm:"not null;default:0"`
	CostMicroUSD    int64 `gorm:"column:cost_micro_usd;not null;default:0"`
}

func (v33Rollup) TableName() string { return "analytics_hourly" }

// migrateV33 adds the rollup table. Dialogs that got their outcome
// before it exists are not in it.
func migrateV33(tx *gorm.DB) error {
	return tx.Migrator().CreateTable(&v33Rollup{})
}
