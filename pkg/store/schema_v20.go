package store

import (
	"time"

	"gorm.io/gorm"
)

// The table shapes of migration step 20 (teams and the audit log), frozen
// like step 1.

// v20Invite is a one-time link that lets an invited user set a password.
type v20Invite struct {
	TokenHash string   `gorm:"primaryKey;size:64"`
	UserID    string   `gorm:"size:64;not null;index:ix_invites_user"`
	User      v1User   `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
	TenantID  string   `gorm:"size:64;not null;index:ix_invites_tenant"`
	Tenant    v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	ExpiresAt time.Time
	CreatedAt time.Time
}

func (v20Invite) TableName() string { return "invites" }

// v20AuditEntry is one audited change of a tenant.
type v20AuditEntry struct {
	ID        string   `gorm:"primaryKey;size:64;index:ix_audit_log_tenant,priority:2"`
	TenantID  string   `gorm:"size:64;not null;index:ix_audit_log_tenant,priority:1"`
	Tenant    v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	ActorKind string   `gorm:"size:16;not null"`
	ActorID   string   `gorm:"size:64;not null;default:''"`
	ActorName string   `gorm:"size:320;not null;default:''"`
	Action    string   `gorm:"size:64;not null"`
	Target    string   `gorm:"size:320;not null;default:''"`
	Detail    string   `gorm:"type:text;not null;default:'{}'"`
	IP        string   `gorm:"size:64;not null;default:''"`
	CreatedAt time.Time
}

func (v20AuditEntry) TableName() string { return "audit_log" }

// migrateV20 adds member invites and the per-tenant audit log; both go
// with their tenant (and an invite with its user). A membership is pending
// (grants nothing) until its invite is accepted.
func migrateV20(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&v20Invite{}, &v20AuditEntry{}); err != nil {
		return err
	}
	return tx.Exec("ALTER TABLE memberships ADD COLUMN pending BOOLEAN NOT NULL DEFAULT FALSE").Error
}
