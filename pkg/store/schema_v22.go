package store

import "gorm.io/gorm"

// The table shape of migration step 22 (hourly usage), frozen like step 1.

// v22HourlyUsage is what a tenant's bot did in one UTC hour: the counters
// the console charts at hourly resolution. Keys and providers are left
// out: the daily table keeps those, and the charts need neither.
type v22HourlyUsage struct {
	TenantID     string   `gorm:"primaryKey;size:64"`
	Tenant       v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Hour         string   `gorm:"primaryKey;size:13"`
	BotID        string   `gorm:"primaryKey;size:64"`
	Messages     int64    `gorm:"not null;default:0"`
	InputTokens  int64    `gorm:"not null;default:0"`
	OutputTokens int64    `gorm:"not null;default:0"`
	CostMicroUSD int64    `gorm:"column:cost_micro_usd;not null;default:0"`
	ToolCalls    int64    `gorm:"not null;default:0"`
	ToolErrors   int64    `gorm:"not null;default:0"`
}

func (v22HourlyUsage) TableName() string { return "usage_hourly" }

// migrateV22 adds the hourly usage table. Usage metered before it has no
// hours: hourly charts of older days show their metered counters as zero.
func migrateV22(tx *gorm.DB) error {
	return tx.Migrator().CreateTable(&v22HourlyUsage{})
}
