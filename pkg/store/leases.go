package store

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// DialogLease says which process runs a dialog's loop, until when. One
// loop per dialog at a time keeps two replies from interleaving.
type DialogLease struct {
	DialogID   string `gorm:"primaryKey"`
	TenantID   string
	Owner      string
	ExpiresAt  time.Time
	AcquiredAt time.Time
}

// AcquireLease makes owner the holder of the tenant's dialog's lease until
// now+ttl, when nobody holds it, its holder's lease expired, or owner
// already holds it. It reports whether owner got it. It is one statement
// (an insert that, on conflict, updates only an expired or own lease), so
// two processes racing on PostgreSQL or SQLite cannot both win.
func (s *Store) AcquireLease(ctx context.Context, tenantID, dialogID, owner string, now time.Time, ttl time.Duration) (bool, error) {
	now = now.UTC()
	l := DialogLease{DialogID: dialogID, TenantID: tenantID, Owner: owner, ExpiresAt: now.Add(ttl), AcquiredAt: now}
	res := s.w(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "dialog_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"owner", "expires_at", "acquired_at"}),
		Where: clause.Where{Exprs: []clause.Expression{gorm.Expr(
			"dialog_leases.tenant_id = excluded.tenant_id AND (dialog_leases.expires_at < ? OR dialog_leases.owner = excluded.owner)", now)}},
	}).Create(&l)
	if res.Error != nil {
		return false, wrap("acquire lease", res.Error)
	}
	return res.RowsAffected == 1, nil
}

// RenewLease extends owner's lease to now+ttl. A lease owner no longer
// holds (it expired and was taken over) is ErrConflict: the caller must
// stop writing to the dialog.
func (s *Store) RenewLease(ctx context.Context, tenantID, dialogID, owner string, now time.Time, ttl time.Duration) error {
	res := s.w(ctx).Model(&DialogLease{}).
		Where("tenant_id = ? AND dialog_id = ? AND owner = ?", tenantID, dialogID, owner).
		Update("expires_at", now.UTC().Add(ttl))
	if res.Error != nil {
		return wrap("renew lease", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("renew lease", ErrConflict)
	}
	return nil
}

// ReleaseLease gives up owner's lease; releasing a lease one does not hold
// does nothing.
func (s *Store) ReleaseLease(ctx context.Context, tenantID, dialogID, owner string) error {
	err := s.w(ctx).Where("tenant_id = ? AND dialog_id = ? AND owner = ?", tenantID, dialogID, owner).
		Delete(&DialogLease{}).Error
	return wrap("release lease", err)
}

// GetLease returns the tenant's dialog's lease, expired or not.
func (s *Store) GetLease(ctx context.Context, tenantID, dialogID string) (*DialogLease, error) {
	var l DialogLease
	if err := s.q(ctx).Where("tenant_id = ? AND dialog_id = ?", tenantID, dialogID).First(&l).Error; err != nil {
		return nil, wrap("get lease", err)
	}
	return &l, nil
}
