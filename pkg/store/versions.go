package store

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// Versions are a tenant's bot versions: reach them with Store.Tenant(id).Versions().
type Versions struct{ scope }

// BotVersion is one immutable, numbered config of a bot, with what the
// compiler made of it. TenantID is repeated from the bot so every query can
// be scoped by tenant without a join.
type BotVersion struct {
	ID       string `gorm:"primaryKey"`
	TenantID string
	BotID    string
	Number   int
	// Config is the config JSON exactly as submitted.
	Config string
	// Tests is the version's conversation test file (pkg/bottest), or "".
	Tests       string
	Prompt      string
	Fingerprint string
	// CreatedBy names who saved it: a key id, a user id or "platform".
	CreatedBy string
	CreatedAt time.Time
}

// Add stores v as the next number of its bot (1 for the first). Run
// it inside Tx together with reading the latest version when the decision
// to add depends on it. Two writers racing for the same number get
// ErrConflict from the unique (bot, number) index rather than a duplicate.
func (ve Versions) Add(ctx context.Context, v *BotVersion) error {
	s := ve.s
	v.TenantID = ve.tenant
	latest, err := s.Tenant(v.TenantID).Versions().Latest(ctx, v.BotID)
	switch {
	case errors.Is(err, ErrNotFound):
		v.Number = 1
	case err != nil:
		return err
	default:
		v.Number = latest.Number + 1
	}
	if v.ID == "" {
		v.ID = NewID(PrefixVersion)
	}
	return wrap("add version", s.q(ctx).Create(v).Error)
}

// Latest returns the highest-numbered version of the tenant's bot.
func (ve Versions) Latest(ctx context.Context, botID string) (*BotVersion, error) {
	s, tenantID := ve.s, ve.tenant
	var v BotVersion
	err := s.q(ctx).Where("tenant_id = ? AND bot_id = ?", tenantID, botID).
		Order("number DESC").First(&v).Error
	if err != nil {
		return nil, wrap("latest version", err)
	}
	return &v, nil
}

// Get returns version number n of the tenant's bot.
func (ve Versions) Get(ctx context.Context, botID string, n int) (*BotVersion, error) {
	s, tenantID := ve.s, ve.tenant
	var v BotVersion
	err := s.q(ctx).Where("tenant_id = ? AND bot_id = ? AND number = ?", tenantID, botID, n).
		First(&v).Error
	if err != nil {
		return nil, wrap("get version", err)
	}
	return &v, nil
}

// List returns one page of the tenant's bot's versions, lowest
// number first. The cursor is the last number seen.
func (ve Versions) List(ctx context.Context, botID string, p Page) ([]BotVersion, string, error) {
	s, tenantID := ve.s, ve.tenant
	q := s.q(ctx).Where("tenant_id = ? AND bot_id = ?", tenantID, botID)
	if p.Cursor != "" {
		after, err := strconv.Atoi(p.Cursor)
		if err != nil {
			return nil, "", wrap("list versions", ErrInvalidCursor)
		}
		q = q.Where("number > ?", after)
	}
	var rows []BotVersion
	if err := q.Order("number").Limit(p.limit() + 1).Find(&rows).Error; err != nil {
		return nil, "", wrap("list versions", err)
	}
	rows, next := nextCursor(rows, p, func(v BotVersion) string { return strconv.Itoa(v.Number) })
	return rows, next, nil
}
