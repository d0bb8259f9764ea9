package store

import (
	"time"

	"gorm.io/gorm"
)

// The table shapes of migration step 2 (dialogs, messages, tool calls,
// leases, idempotency keys, usage), frozen like step 1.

type v2Dialog struct {
	ID       string   `gorm:"primaryKey;size:64"`
	TenantID string   `gorm:"size:64;not null;index:ix_dialogs_tenant_bot,priority:1"`
	Tenant   v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	BotID    string   `gorm:"size:64;not null;index:ix_dialogs_tenant_bot,priority:2"`
	Bot      v1Bot    `gorm:"foreignKey:BotID;constraint:OnDelete:CASCADE"`
	// VersionNumber is pinned at creation; Preview marks a draft version
	// an editor chose instead of the published one.
	VersionNumber int    `gorm:"not null"`
	Preview       bool   `gorm:"not null;default:false"`
	UserID        string `gorm:"size:200;not null;default:''"`
	Channel       string `gorm:"size:32;not null;default:''"`
	Context       string `gorm:"type:text;not null"`
	Status        string `gorm:"size:16;not null"`
	State         string `gorm:"type:text;not null"`
	// LastSeq is the highest message seq handed out, bumped atomically.
	LastSeq   int64 `gorm:"not null;default:0"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (v2Dialog) TableName() string { return "dialogs" }

type v2Message struct {
	ID           string   `gorm:"primaryKey;size:64"`
	TenantID     string   `gorm:"size:64;not null;index:ix_messages_tenant"`
	DialogID     string   `gorm:"size:64;not null;uniqueIndex:ux_messages_dialog_seq,priority:1"`
	Dialog       v2Dialog `gorm:"foreignKey:DialogID;constraint:OnDelete:CASCADE"`
	Seq          int64    `gorm:"not null;uniqueIndex:ux_messages_dialog_seq,priority:2"`
	Kind         string   `gorm:"size:20;not null"`
	Role         string   `gorm:"size:20;not null"`
	Content      string   `gorm:"type:text;not null"`
	Text         string   `gorm:"type:text;not null"`
	Model        string   `gorm:"size:200;not null;default:''"`
	Provider     string   `gorm:"size:100;not null;default:''"`
	BotVersion   int      `gorm:"not null;default:0"`
	Status       string   `gorm:"size:16;not null"`
	Turn         int      `gorm:"not null;default:0"`
	Meta         string   `gorm:"type:text;not null"`
	InputTokens  int      `gorm:"not null;default:0"`
	OutputTokens int      `gorm:"not null;default:0"`
	CreatedAt    time.Time
}

func (v2Message) TableName() string { return "messages" }

type v2ToolCall struct {
	TenantID   string   `gorm:"size:64;not null;index:ix_tool_calls_tenant"`
	DialogID   string   `gorm:"primaryKey;size:64"`
	Dialog     v2Dialog `gorm:"foreignKey:DialogID;constraint:OnDelete:CASCADE"`
	CallID     string   `gorm:"primaryKey;size:128"`
	MessageID  string   `gorm:"size:64;not null"`
	Name       string   `gorm:"size:128;not null"`
	Arguments  string   `gorm:"type:text;not null"`
	Result     string   `gorm:"type:text;not null"`
	IsError    bool     `gorm:"not null;default:false"`
	Status     string   `gorm:"size:16;not null"`
	DurationMS int64    `gorm:"not null;default:0"`
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

func (v2ToolCall) TableName() string { return "tool_calls" }

type v2DialogLease struct {
	DialogID   string   `gorm:"primaryKey;size:64"`
	Dialog     v2Dialog `gorm:"foreignKey:DialogID;constraint:OnDelete:CASCADE"`
	TenantID   string   `gorm:"size:64;not null"`
	Owner      string   `gorm:"size:128;not null"`
	ExpiresAt  time.Time
	AcquiredAt time.Time
}

func (v2DialogLease) TableName() string { return "dialog_leases" }

type v2IdempotencyKey struct {
	TenantID    string   `gorm:"primaryKey;size:64"`
	Tenant      v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Key         string   `gorm:"primaryKey;size:255"`
	Fingerprint string   `gorm:"size:64;not null"`
	Status      int      `gorm:"not null;default:0"`
	ContentType string   `gorm:"size:100;not null;default:''"`
	Body        string   `gorm:"type:text;not null"`
	CreatedAt   time.Time
}

func (v2IdempotencyKey) TableName() string { return "idempotency_keys" }

type v2Usage struct {
	TenantID     string   `gorm:"primaryKey;size:64"`
	Tenant       v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Day          string   `gorm:"primaryKey;size:10"`
	BotID        string   `gorm:"primaryKey;size:64"`
	KeyID        string   `gorm:"primaryKey;size:64"`
	InputTokens  int64    `gorm:"not null;default:0"`
	OutputTokens int64    `gorm:"not null;default:0"`
	CostMicroUSD int64    `gorm:"column:cost_micro_usd;not null;default:0"`
	ToolCalls    int64    `gorm:"not null;default:0"`
	Turns        int64    `gorm:"not null;default:0"`
	UpdatedAt    time.Time
}

func (v2Usage) TableName() string { return "usage_daily" }

func migrateV2(tx *gorm.DB) error {
	return tx.Migrator().CreateTable(
		&v2Dialog{}, &v2Message{}, &v2ToolCall{}, &v2DialogLease{}, &v2IdempotencyKey{}, &v2Usage{},
	)
}
