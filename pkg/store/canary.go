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
	return bo.Get(ctx, botID)
}

// VersionUsage is what the dialogs of one bot version started and spent.
type VersionUsage struct {
	Version      int
	Dialogs      int64
	InputTokens  int64
	OutputTokens int64
}
