package store

import (
	"cmp"
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

// TakeLease is AcquireLease for a run about to start, and returns the
// dialog as the new holder must see it: with everything the previous
// holder saved. When owner gets the lease, every streaming message of the
// dialog becomes interrupted (whoever streamed it is gone), as
// MarkInterrupted does. A lease someone else holds is ErrConflict; a
// dialog that is not the tenant's is ErrNotFound, and no lease is taken.
// On PostgreSQL all of it is one statement, so starting a run costs one
// round trip instead of three; on SQLite it is one transaction. Either way
// a failure does nothing.
func (s *Store) TakeLease(ctx context.Context, tenantID, dialogID, owner string, now time.Time, ttl time.Duration) (*Dialog, error) {
	if s.dialect != DialectPostgres {
		var d *Dialog
		err := s.Tx(ctx, func(tx *Store) error {
			// Writing first takes SQLite's write lock, so the reads after
			// it see the last commit of whoever held the lease before.
			ok, err := tx.AcquireLease(ctx, tenantID, dialogID, owner, now, ttl)
			if err != nil {
				return err
			}
			if d, err = tx.GetDialog(ctx, tenantID, dialogID); err != nil || !ok {
				return cmp.Or(err, wrap("take lease", ErrConflict))
			}
			_, err = tx.MarkInterrupted(ctx, tenantID, dialogID)
			return err
		})
		if err != nil {
			return nil, err
		}
		return d, nil
	}
	now = now.UTC()
	// The lease is inserted only for a dialog of the tenant. The UPDATE
	// and the SELECT read the lease CTE, so they act only when the lease
	// was won. The previous holder's last save (state and release in one
	// commit) may commit while this statement waits for its lease row,
	// after this statement's snapshot was taken: FOR SHARE makes
	// PostgreSQL return the dialog row's latest committed version rather
	// than the snapshot's, as it re-checks a streaming row the holder
	// completed meanwhile against its committed status.
	rows, err := s.q(ctx).Raw(`WITH lease AS (
  INSERT INTO dialog_leases (dialog_id, tenant_id, owner, expires_at, acquired_at)
  SELECT ?, ?, ?, ?::timestamptz, ?::timestamptz WHERE EXISTS (SELECT 1 FROM dialogs WHERE tenant_id = ? AND id = ?)
  ON CONFLICT (dialog_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at, acquired_at = excluded.acquired_at
  WHERE dialog_leases.tenant_id = excluded.tenant_id AND (dialog_leases.expires_at < ? OR dialog_leases.owner = excluded.owner)
  RETURNING 1 AS won),
interrupted AS (
  UPDATE messages SET status = ? WHERE tenant_id = ? AND dialog_id = ? AND status = ? AND EXISTS (SELECT 1 FROM lease))
SELECT `+dialogColumns+` FROM dialogs WHERE tenant_id = ? AND id = ? AND EXISTS (SELECT 1 FROM lease) FOR SHARE`,
		dialogID, tenantID, owner, now.Add(ttl), now, tenantID, dialogID, now,
		MessageInterrupted, tenantID, dialogID, MessageStreaming,
		tenantID, dialogID).Rows()
	if err != nil {
		return nil, wrap("take lease", err)
	}
	defer rows.Close()
	if rows.Next() {
		d, err := scanDialog(rows)
		return d, wrap("take lease", err)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("take lease", err)
	}
	// Not won: held by someone else, or not the tenant's dialog.
	if _, err := s.GetDialog(ctx, tenantID, dialogID); err != nil {
		return nil, err
	}
	return nil, wrap("take lease", ErrConflict)
}
