package store

import (
	"time"

	"gorm.io/gorm"
)

// v10Usage is usage_daily with the provider that answered in its key, so
// usage and cost can be told apart per provider when a bot falls back from
// one to another.
type v10Usage struct {
	TenantID     string   `gorm:"primaryKey;size:64"`
	Tenant       v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Day          string   `gorm:"primaryKey;size:10"`
	BotID        string   `gorm:"primaryKey;size:64"`
	KeyID        string   `gorm:"primaryKey;size:64"`
	Provider     string   `gorm:"primaryKey;size:100"`
	InputTokens  int64    `gorm:"not null;default:0"`
	OutputTokens int64    `gorm:"not null;default:0"`
	CostMicroUSD int64    `gorm:"column:cost_micro_usd;not null;default:0"`
	ToolCalls    int64    `gorm:"not null;default:0"`
	Turns        int64    `gorm:"not null;default:0"`
	UpdatedAt    time.Time
}

func (v10Usage) TableName() string { return "usage_daily_v9" }

// migrateV10 rebuilds usage_daily with provider in its primary key (neither
// SQLite nor a portable ALTER can change a key in place). Rows metered
// before it keep provider "": the provider was not recorded then.
func migrateV10(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&v10Usage{}); err != nil {
		return err
	}
	const cols = "tenant_id, day, bot_id, key_id, input_tokens, output_tokens, cost_micro_usd, tool_calls, turns, updated_at"
	if err := tx.Exec("INSERT INTO usage_daily_v9 (" + cols + ", provider) SELECT " + cols + ", '' FROM usage_daily").Error; err != nil {
		return err
	}
	// Plain DROP TABLE: the SQLite migrator's own would wait for a second
	// connection while this transaction holds the only one.
	if err := tx.Exec("DROP TABLE usage_daily").Error; err != nil {
		return err
	}
	return tx.Migrator().RenameTable("usage_daily_v9", "usage_daily")
}
