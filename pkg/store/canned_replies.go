package store

import (
	"context"
	"time"
)

// CannedReplies are a tenant's canned replies, the texts its operators
// insert by shortcut: reach them with Store.Tenant(id).CannedReplies().
type CannedReplies struct{ scope }

// PrefixCannedReply starts the id of a canned reply.
const PrefixCannedReply = "canned"

// MaxCannedReplies caps how many canned replies a tenant keeps.
const MaxCannedReplies = 500

// CannedReply is one canned reply; Shortcut is unique in its tenant.
type CannedReply struct {
	ID        string `gorm:"primaryKey"`
	TenantID  string
	Shortcut  string
	Text      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TableName implements gorm's Tabler.
func (CannedReply) TableName() string { return "canned_replies" }

// List returns the tenant's canned replies by shortcut.
func (cr CannedReplies) List(ctx context.Context) ([]CannedReply, error) {
	var out []CannedReply
	err := cr.s.q(ctx).Where("tenant_id = ?", cr.tenant).Order("shortcut").Limit(MaxCannedReplies).Find(&out).Error
	return out, wrap("list canned replies", err)
}

// Create stores r for the tenant with a new id; a shortcut the tenant
// uses already is ErrConflict.
func (cr CannedReplies) Create(ctx context.Context, r *CannedReply, now time.Time) error {
	r.ID, r.TenantID = NewID(PrefixCannedReply), cr.tenant
	r.CreatedAt, r.UpdatedAt = now.UTC(), now.UTC()
	return wrap("create canned reply", cr.s.q(ctx).Create(r).Error)
}

// Update sets the shortcut and text of the tenant's canned reply id and
// returns it; no such reply is ErrNotFound, a shortcut another reply
// has ErrConflict.
func (cr CannedReplies) Update(ctx context.Context, id, shortcut, text string, now time.Time) (*CannedReply, error) {
	res := cr.s.q(ctx).Model(&CannedReply{}).Where("tenant_id = ? AND id = ?", cr.tenant, id).
		Updates(map[string]any{"shortcut": shortcut, "text": text, "updated_at": now.UTC()})
	if res.Error != nil {
		return nil, wrap("update canned reply", res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, wrap("update canned reply", ErrNotFound)
	}
	var out CannedReply
	err := cr.s.q(ctx).Where("tenant_id = ? AND id = ?", cr.tenant, id).Take(&out).Error
	return &out, wrap("update canned reply", err)
}

// Get returns the tenant's canned reply id.
func (cr CannedReplies) Get(ctx context.Context, id string) (*CannedReply, error) {
	var out CannedReply
	err := cr.s.q(ctx).Where("tenant_id = ? AND id = ?", cr.tenant, id).Take(&out).Error
	return &out, wrap("get canned reply", err)
}

// Delete deletes the tenant's canned reply id; no such reply is
// ErrNotFound.
func (cr CannedReplies) Delete(ctx context.Context, id string) error {
	res := cr.s.q(ctx).Where("tenant_id = ? AND id = ?", cr.tenant, id).Delete(&CannedReply{})
	if res.Error == nil && res.RowsAffected == 0 {
		return wrap("delete canned reply", ErrNotFound)
	}
	return wrap("delete canned reply", res.Error)
}
