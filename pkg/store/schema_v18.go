package store

import (
	"time"

	"gorm.io/gorm"
)

// The table shapes of migration step 18 (the console: feedback, search and
// charts), frozen like step 1.

// v18Feedback is an end user's rating of one assistant message: one row a
// message, replaced when the user changes their mind.
type v18Feedback struct {
	MessageID string    `gorm:"primaryKey;size:64"`
	TenantID  string    `gorm:"size:64;not null;index:ix_feedback_tenant_created,priority:1;index:ix_feedback_tenant_rating,priority:1"`
	Tenant    v1Tenant  `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	DialogID  string    `gorm:"size:64;not null;index:ix_feedback_dialog;index:ix_feedback_tenant_rating,priority:3"`
	Dialog    v2Dialog  `gorm:"foreignKey:DialogID;constraint:OnDelete:CASCADE"`
	BotID     string    `gorm:"size:64;not null"`
	Rating    string    `gorm:"size:8;not null;index:ix_feedback_tenant_rating,priority:2"`
	Comment   string    `gorm:"type:text;not null;default:''"`
	CreatedAt time.Time `gorm:"index:ix_feedback_tenant_created,priority:2"`
	UpdatedAt time.Time
}

func (v18Feedback) TableName() string { return "message_feedback" }

// migrateV18 adds what the console reads: feedback on replies; the
// indexes that keep the charts' and the dialog filters' queries to the
// rows they report (dialogs by creation time, by end user); counters of
// messages and failed tool calls beside the metered usage; and the
// full-text index over message text (a GIN expression index on
// PostgreSQL, an FTS5 table kept by triggers on SQLite, so every write
// path, erasure included, keeps it in step without knowing of it).
func migrateV18(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&v18Feedback{}); err != nil {
		return err
	}
	steps := []string{
		"CREATE INDEX ix_dialogs_tenant_created ON dialogs (tenant_id, created_at)",
		"CREATE INDEX ix_dialogs_tenant_user ON dialogs (tenant_id, user_id)",
		"ALTER TABLE usage_daily ADD COLUMN messages BIGINT NOT NULL DEFAULT 0",
		"ALTER TABLE usage_daily ADD COLUMN tool_errors BIGINT NOT NULL DEFAULT 0",
	}
	if tx.Dialector.Name() == "postgres" {
		steps = append(steps, "CREATE INDEX ix_messages_search ON messages USING GIN (to_tsvector('simple', text))")
	} else {
		steps = append(steps,
			"CREATE VIRTUAL TABLE messages_search USING fts5(text, content='messages', content_rowid='rowid')",
			"INSERT INTO messages_search (messages_search) VALUES ('rebuild')",
			`CREATE TRIGGER messages_search_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_search (rowid, text) VALUES (new.rowid, new.text);
END`,
			`CREATE TRIGGER messages_search_delete AFTER DELETE ON messages BEGIN
  INSERT INTO messages_search (messages_search, rowid, text) VALUES ('delete', old.rowid, old.text);
END`,
			`CREATE TRIGGER messages_search_update AFTER UPDATE OF text ON messages BEGIN
  INSERT INTO messages_search (messages_search, rowid, text) VALUES ('delete', old.rowid, old.text);
  INSERT INTO messages_search (rowid, text) VALUES (new.rowid, new.text);
END`)
	}
	for _, q := range steps {
		if err := tx.Exec(q).Error; err != nil {
			return err
		}
	}
	return nil
}
