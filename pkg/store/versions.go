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
	latest, err := ve.Latest(ctx, v.BotID)
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

// Publish makes version number n of the tenant's bot the live one.
// A number that does not exist is ErrNotFound.
func (ve Versions) Publish(ctx context.Context, botID string, n int) (*Bot, error) {
	s, tenantID := ve.s, ve.tenant
	if _, err := ve.Get(ctx, botID, n); err != nil {
		return nil, err
	}
	res := s.q(ctx).Model(&Bot{}).Where("tenant_id = ? AND id = ?", tenantID, botID).
		Update("published_version", n)
	if res.Error != nil {
		return nil, wrap("publish version", res.Error)
	}
	return s.Tenant(tenantID).Bots().Get(ctx, botID)
}

// Usage totals, for each of the tenant's bot's versions asked,
// the non-preview dialogs started on it and the tokens its assistant
// messages spent, so a canary is metered apart from the live version.
func (ve Versions) Usage(ctx context.Context, botID string, versions []int) (map[int]VersionUsage, error) {
	s, tenantID := ve.s, ve.tenant
	out := map[int]VersionUsage{}
	for _, v := range versions {
		out[v] = VersionUsage{Version: v}
	}
	var dialogs []struct {
		VersionNumber int
		N             int64
	}
	err := s.q(ctx).Table("dialogs").Select("version_number, COUNT(*) AS n").
		Where("tenant_id = ? AND bot_id = ? AND preview = ? AND version_number IN ?", tenantID, botID, false, versions).
		Group("version_number").Scan(&dialogs).Error
	if err != nil {
		return nil, wrap("usage of versions", err)
	}
	for _, d := range dialogs {
		u := out[d.VersionNumber]
		u.Dialogs = d.N
		out[d.VersionNumber] = u
	}
	var tokens []struct {
		BotVersion   int
		InputTokens  int64
		OutputTokens int64
	}
	err = s.q(ctx).Table("messages").
		Select("messages.bot_version, SUM(messages.input_tokens) AS input_tokens, SUM(messages.output_tokens) AS output_tokens").
		Joins("JOIN dialogs ON dialogs.id = messages.dialog_id").
		Where("messages.tenant_id = ? AND dialogs.bot_id = ? AND dialogs.preview = ? AND messages.bot_version IN ?", tenantID, botID, false, versions).
		Group("messages.bot_version").Scan(&tokens).Error
	if err != nil {
		return nil, wrap("usage of versions", err)
	}
	for _, t := range tokens {
		u := out[t.BotVersion]
		u.InputTokens, u.OutputTokens = t.InputTokens, t.OutputTokens
		out[t.BotVersion] = u
	}
	return out, nil
}
