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

// TakeLease is AcquireLease for a run about to start: when owner gets the
// lease, every streaming message of the dialog becomes interrupted (whoever
// streamed it is gone), as MarkInterrupted does. On PostgreSQL both happen
// in one statement, so starting a run costs one round trip instead of two;
// on SQLite they share a transaction. Either way a failure does neither.
func (s *Store) TakeLease(ctx context.Context, tenantID, dialogID, owner string, now time.Time, ttl time.Duration) (bool, error) {
	if s.dialect != DialectPostgres {
		var ok bool
		err := s.Tx(ctx, func(tx *Store) error {
			var err error
			if ok, err = tx.AcquireLease(ctx, tenantID, dialogID, owner, now, ttl); err != nil || !ok {
				return err
			}
			_, err = tx.MarkInterrupted(ctx, tenantID, dialogID)
			return err
		})
		return ok && err == nil, err
	}
	now = now.UTC()
	// The UPDATE reads the lease CTE, so it runs only when the lease was
	// won; a row the previous holder completed meanwhile is re-checked by
	// PostgreSQL against its committed status and left alone.
	won, err := s.int64s(ctx, `WITH lease AS (
  INSERT INTO dialog_leases (dialog_id, tenant_id, owner, expires_at, acquired_at) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (dialog_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at, acquired_at = excluded.acquired_at
  WHERE dialog_leases.tenant_id = excluded.tenant_id AND (dialog_leases.expires_at < ? OR dialog_leases.owner = excluded.owner)
  RETURNING 1 AS won),
interrupted AS (
  UPDATE messages SET status = ? WHERE tenant_id = ? AND dialog_id = ? AND status = ? AND EXISTS (SELECT 1 FROM lease))
SELECT won FROM lease`,
		dialogID, tenantID, owner, now.Add(ttl), now, now,
		MessageInterrupted, tenantID, dialogID, MessageStreaming)
	if err != nil {
		return false, wrap("take lease", err)
	}
	return len(won) == 1, nil
}
