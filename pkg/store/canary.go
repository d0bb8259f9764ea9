package store

import "context"

// SetCanary sends percent of the tenant's bot's new dialogs to version;
// version 0 drops the canary. A version that does not exist is ErrNotFound.
func (bo Bots) SetCanary(ctx context.Context, botID string, version, percent int) (*Bot, error) {
	s, tenantID := bo.s, bo.tenant
	if version != 0 {
		if _, err := s.Tenant(tenantID).Versions().Get(ctx, botID, version); err != nil {
			return nil, err
		}
	} else {
		percent = 0
	}
	res := s.q(ctx).Model(&Bot{}).Where("tenant_id = ? AND id = ?", tenantID, botID).
		Updates(map[string]any{"canary_version": version, "canary_percent": percent})
	if res.Error != nil {
		return nil, wrap("set canary", res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, wrap("set canary", ErrNotFound)
	}
	return s.Tenant(tenantID).Bots().Get(ctx, botID)
}

// VersionUsage is what the dialogs of one bot version started and spent.
type VersionUsage struct {
	Version      int
	Dialogs      int64
	InputTokens  int64
	OutputTokens int64
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
