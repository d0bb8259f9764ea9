package store

import (
	"context"
	"time"

	"gorm.io/gorm/clause"
)

// Drafts are a tenant's autosaved config drafts: reach them with
// Store.Tenant(id).Drafts().
type Drafts struct{ scope }

// BotDraft is one person's unsaved config (and conversation tests) of one
// bot. The text is kept as typed, even when it is not JSON yet.
type BotDraft struct {
	TenantID  string `gorm:"primaryKey"`
	BotID     string `gorm:"primaryKey"`
	Owner     string `gorm:"primaryKey"`
	Config    string
	Tests     string
	UpdatedAt time.Time
}

func (BotDraft) TableName() string { return "bot_drafts" }

// Get returns owner's draft of the bot; ErrNotFound when there is none.
func (d Drafts) Get(ctx context.Context, botID, owner string) (*BotDraft, error) {
	var out BotDraft
	err := d.s.q(ctx).Where("tenant_id = ? AND bot_id = ? AND owner = ?", d.tenant, botID, owner).First(&out).Error
	return &out, wrap("get draft", err)
}

// Put replaces owner's draft of the bot in one statement.
func (d Drafts) Put(ctx context.Context, draft *BotDraft) error {
	draft.TenantID = d.tenant
	draft.UpdatedAt = time.Now().UTC()
	err := d.s.q(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "tenant_id"}, {Name: "bot_id"}, {Name: "owner"}},
		DoUpdates: clause.AssignmentColumns([]string{"config", "tests", "updated_at"}),
	}).Create(draft).Error
	return wrap("put draft", err)
}

// Delete removes owner's draft of the bot; none is not an error.
func (d Drafts) Delete(ctx context.Context, botID, owner string) error {
	err := d.s.q(ctx).Where("tenant_id = ? AND bot_id = ? AND owner = ?", d.tenant, botID, owner).Delete(&BotDraft{}).Error
	return wrap("delete draft", err)
}
