package store

import "gorm.io/gorm"

type v11TenantLimits struct {
	TenantID        string   `gorm:"primaryKey;size:64"`
	Tenant          v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	DailyTokenQuota *int64
	RatePerSecond   *float64
	RateBurst       *int
}

func (v11TenantLimits) TableName() string { return "tenant_limits" }

// migrateV12 creates the per-tenant limits (the tenant's plan); a tenant
// without a row uses the server's.
func migrateV12(tx *gorm.DB) error {
	return tx.Migrator().CreateTable(&v11TenantLimits{})
}
