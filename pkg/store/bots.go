package store

import (
	"context"
	"time"
)

// Bots are a tenant's bots: reach them with Store.Tenant(id).Bots().
type Bots struct{ scope }

// Bot is a tenant's chatbot. Its configs live in numbered BotVersions; one
// of them may be published.
type Bot struct {
	ID       string `gorm:"primaryKey"`
	TenantID string
	Slug     string
	Name     string
	// PublishedVersion is the number of the live version; 0 means none.
	PublishedVersion int
	// RequirePassingTests refuses to publish a version whose tests fail.
	RequirePassingTests bool
	// CanaryVersion, when not 0, takes CanaryPercent of new dialogs.
	CanaryVersion int
	CanaryPercent int
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Create inserts b. A slug already used in the tenant is ErrConflict.
func (bo Bots) Create(ctx context.Context, b *Bot) error {
	s := bo.s
	b.TenantID = bo.tenant
	if b.ID == "" {
		b.ID = NewID(PrefixBot)
	}
	return wrap("create bot", s.q(ctx).Create(b).Error)
}

// Get finds the tenant's bot by id or slug.
func (bo Bots) Get(ctx context.Context, idOrSlug string) (*Bot, error) {
	s, tenantID := bo.s, bo.tenant
	var b Bot
	err := s.q(ctx).Where("tenant_id = ? AND (id = ? OR slug = ?)", tenantID, idOrSlug, idOrSlug).
		First(&b).Error
	if err != nil {
		return nil, wrap("get bot", err)
	}
	return &b, nil
}

// List returns one page of the tenant's bots, oldest first.
func (bo Bots) List(ctx context.Context, p Page) ([]Bot, string, error) {
	s, tenantID := bo.s, bo.tenant
	var rows []Bot
	if err := paged(s.q(ctx).Where("tenant_id = ?", tenantID), "id", p).Find(&rows).Error; err != nil {
		return nil, "", wrap("list bots", err)
	}
	rows, next := nextCursor(rows, p, func(b Bot) string { return b.ID })
	return rows, next, nil
}

// Rename renames the tenant's bot, keeping its display name in step
// with the latest config.
func (bo Bots) Rename(ctx context.Context, botID, name string) error {
	s, tenantID := bo.s, bo.tenant
	res := s.q(ctx).Model(&Bot{}).Where("tenant_id = ? AND id = ?", tenantID, botID).Update("name", name)
	if res.Error != nil {
		return wrap("update bot name", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("update bot name", ErrNotFound)
	}
	return nil
}

// Delete removes the tenant's bot with its versions, dialogs and the
// memory notes it keeps about end users.
func (bo Bots) Delete(ctx context.Context, botID string) error {
	s, tenantID := bo.s, bo.tenant
	return s.Tx(ctx, func(tx *Store) error {
		// Children first: SQLite enforces ON DELETE CASCADE only with its
		// foreign-key pragma, so nothing is left to chance.
		var dialogIDs []string
		if err := tx.q(ctx).Table("dialogs").Where("tenant_id = ? AND bot_id = ?", tenantID, botID).Pluck("id", &dialogIDs).Error; err != nil {
			return wrap("delete bot", err)
		}
		if len(dialogIDs) > 0 {
			// Idempotency keys that name the bot's messages go with them (as in deleteDialogs).
			if err := tx.q(ctx).Exec("DELETE FROM idempotency_keys WHERE tenant_id = ? AND message_id <> '' AND message_id IN (SELECT id FROM messages WHERE tenant_id = ? AND dialog_id IN ?)", tenantID, tenantID, dialogIDs).Error; err != nil {
				return wrap("delete bot", err)
			}
		}
		for _, table := range []string{"tool_calls", "messages", "dialog_leases"} {
			if len(dialogIDs) == 0 {
				continue
			}
			if err := tx.q(ctx).Exec("DELETE FROM "+table+" WHERE dialog_id IN ?", dialogIDs).Error; err != nil {
				return wrap("delete bot", err)
			}
		}
		for _, table := range []string{"dialogs", "bot_versions", "memory_notes"} {
			if err := tx.q(ctx).Exec("DELETE FROM "+table+" WHERE tenant_id = ? AND bot_id = ?", tenantID, botID).Error; err != nil {
				return wrap("delete bot", err)
			}
		}
		res := tx.q(ctx).Where("tenant_id = ? AND id = ?", tenantID, botID).Delete(&Bot{})
		if res.Error != nil {
			return wrap("delete bot", res.Error)
		}
		if res.RowsAffected == 0 {
			return wrap("delete bot", ErrNotFound)
		}
		return nil
	})
}

// SetRequirePassingTests turns the tenant's bot's publish gate on or off.
func (bo Bots) SetRequirePassingTests(ctx context.Context, botID string, on bool) (*Bot, error) {
	s, tenantID := bo.s, bo.tenant
	res := s.q(ctx).Model(&Bot{}).Where("tenant_id = ? AND id = ?", tenantID, botID).Update("require_passing_tests", on)
	if res.Error != nil {
		return nil, wrap("set require passing tests", res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, wrap("set require passing tests", ErrNotFound)
	}
	return bo.Get(ctx, botID)
}
