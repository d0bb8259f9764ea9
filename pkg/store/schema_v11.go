package store

import (
	"time"

	"gorm.io/gorm"
)

type v10Provider struct {
	TenantID     string   `gorm:"primaryKey;size:64"`
	Name         string   `gorm:"primaryKey;size:64"`
	Tenant       v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Kind         string   `gorm:"size:32;not null"`
	BaseURL      string   `gorm:"size:2000;not null"`
	APIKeySecret string   `gorm:"size:128;not null;default:''"`
	Headers      string   `gorm:"not null;default:'{}'"`
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

func (v10Provider) TableName() string { return "providers" }

// migrateV11 creates the tenants' own model providers.
func migrateV11(tx *gorm.DB) error {
	return tx.Migrator().CreateTable(&v10Provider{})
}
