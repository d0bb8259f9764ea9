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

// CreateBot inserts b. A slug already used in the tenant is ErrConflict.
func (s *Store) CreateBot(ctx context.Context, b *Bot) error {
	if b.ID == "" {
		b.ID = NewID(PrefixBot)
	}
	return wrap("create bot", s.q(ctx).Create(b).Error)
}

// GetBot finds the tenant's bot by id or slug.
func (s *Store) GetBot(ctx context.Context, tenantID, idOrSlug string) (*Bot, error) {
	var b Bot
	err := s.q(ctx).Where("tenant_id = ? AND (id = ? OR slug = ?)", tenantID, idOrSlug, idOrSlug).
		First(&b).Error
	if err != nil {
		return nil, wrap("get bot", err)
	}
	return &b, nil
}

// ListBots returns one page of the tenant's bots, oldest first.
func (s *Store) ListBots(ctx context.Context, tenantID string, p Page) ([]Bot, string, error) {
	var rows []Bot
	if err := paged(s.q(ctx).Where("tenant_id = ?", tenantID), "id", p).Find(&rows).Error; err != nil {
		return nil, "", wrap("list bots", err)
	}
	rows, next := nextCursor(rows, p, func(b Bot) string { return b.ID })
	return rows, next, nil
}

// UpdateBotName renames the tenant's bot, keeping its display name in step
// with the latest config.
func (s *Store) UpdateBotName(ctx context.Context, tenantID, botID, name string) error {
	res := s.q(ctx).Model(&Bot{}).Where("tenant_id = ? AND id = ?", tenantID, botID).Update("name", name)
	if res.Error != nil {
		return wrap("update bot name", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("update bot name", ErrNotFound)
	}
	return nil
}

// DeleteBot removes the tenant's bot with its versions, dialogs and the
// memory notes it keeps about end users.
func (s *Store) DeleteBot(ctx context.Context, tenantID, botID string) error {
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
func (s *Store) SetRequirePassingTests(ctx context.Context, tenantID, botID string, on bool) (*Bot, error) {
	res := s.q(ctx).Model(&Bot{}).Where("tenant_id = ? AND id = ?", tenantID, botID).Update("require_passing_tests", on)
	if res.Error != nil {
		return nil, wrap("set require passing tests", res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, wrap("set require passing tests", ErrNotFound)
	}
	return s.GetBot(ctx, tenantID, botID)
}

// PublishVersion makes version number n of the tenant's bot the live one.
// A number that does not exist is ErrNotFound.
func (s *Store) PublishVersion(ctx context.Context, tenantID, botID string, n int) (*Bot, error) {
	if _, err := s.GetVersion(ctx, tenantID, botID, n); err != nil {
		return nil, err
	}
	res := s.q(ctx).Model(&Bot{}).Where("tenant_id = ? AND id = ?", tenantID, botID).
		Update("published_version", n)
	if res.Error != nil {
		return nil, wrap("publish version", res.Error)
	}
	return s.GetBot(ctx, tenantID, botID)
}
