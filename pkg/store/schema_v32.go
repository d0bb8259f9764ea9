package store

import (
	"time"

	"gorm.io/gorm"
)

// The table shapes of migration step 32 (dialog outcomes), frozen like
// step 1.

// v32Unanswered is a user message the bot could not answer: it handed
// off, was rated down, a tool failed, or the model called cannot_answer.
// Rows are written when the dialog's outcome is computed and replaced
// when it is computed again.
type v32Unanswered struct {
	ID            string    `gorm:"primaryKey;size:64"`
	TenantID      string    `gorm:"size:64;not null;index:ix_unanswered_tenant_created,priority:1"`
	Tenant        v1Tenant  `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	DialogID      string    `gorm:"size:64;not null;index:ix_unanswered_dialog"`
	Dialog        v2Dialog  `gorm:"foreignKey:DialogID;constraint:OnDelete:CASCADE"`
	BotID         string    `gorm:"size:64;not null"`
	VersionNumber int       `gorm:"not null"`
	MessageID     string    `gorm:"size:64;not null"`
	Text          string    `gorm:"type:text;not null"`
	Reason        string    `gorm:"size:32;not null"`
	CreatedAt     time.Time `gorm:"index:ix_unanswered_tenant_created,priority:2"`
}

func (v32Unanswered) TableName() string { return "unanswered_questions" }

// migrateV32 gives dialogs their outcome (resolved, handed_off,
// abandoned, failed; ” while open), the end user's rating of the whole
// dialog, the tenant's labels, and the facts the outcome is computed
// from that the messages do not keep (a handoff that was released, runs
// that failed); tenants their idle period; and the unanswered questions.
// The partial index keeps the idle sweep to the dialogs without an
// outcome.
func migrateV32(tx *gorm.DB) error {
	ts := "TIMESTAMP"
	if tx.Dialector.Name() == "postgres" {
		ts = "TIMESTAMPTZ"
	}
	steps := []string{
		"ALTER TABLE dialogs ADD COLUMN outcome VARCHAR(16) NOT NULL DEFAULT ''",
		"ALTER TABLE dialogs ADD COLUMN outcome_reason VARCHAR(32) NOT NULL DEFAULT ''",
		"ALTER TABLE dialogs ADD COLUMN outcome_at " + ts,
		"ALTER TABLE dialogs ADD COLUMN rating INTEGER NOT NULL DEFAULT 0",
		"ALTER TABLE dialogs ADD COLUMN rating_comment TEXT NOT NULL DEFAULT ''",
		"ALTER TABLE dialogs ADD COLUMN labels TEXT NOT NULL DEFAULT '[]'",
		"ALTER TABLE dialogs ADD COLUMN handed_off BOOLEAN NOT NULL DEFAULT false",
		"ALTER TABLE dialogs ADD COLUMN run_failures INTEGER NOT NULL DEFAULT 0",
		"ALTER TABLE dialogs ADD COLUMN came_back_in VARCHAR(64) NOT NULL DEFAULT ''",
		"UPDATE dialogs SET handed_off = true WHERE id IN (SELECT dialog_id FROM dialog_handoffs)",
		"CREATE INDEX ix_dialogs_tenant_outcome ON dialogs (tenant_id, outcome)",
		"CREATE INDEX ix_dialogs_unsettled ON dialogs (tenant_id, updated_at) WHERE outcome = ''",
		"ALTER TABLE tenants ADD COLUMN idle_minutes INTEGER NOT NULL DEFAULT 30",
	}
	for _, q := range steps {
		if err := tx.Exec(q).Error; err != nil {
			return err
		}
	}
	return tx.Migrator().CreateTable(&v32Unanswered{})
}
