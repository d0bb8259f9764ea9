package store

import (
	"cmp"
	"context"
	"errors"
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

// Take asks TakeLease for a dialog's lease.
type Take struct {
	TenantID, DialogID, Owner string
	// BotID, when set, limits the lease to a dialog of that bot: what a
	// publishable key may chat with.
	BotID string
	Now   time.Time
	TTL   time.Duration
	// First, when set, is the user's message that starts the run. It is
	// stored as the dialog's next message with the lease: complete, or
	// queued when the dialog is paused (it waits for tool results, which
	// no user text may precede). Its ID, Seq and Status are set.
	First *Message
	// Reply, when set with First, is the row of the reply the run is about
	// to stream, stored streaming right after First in an active dialog,
	// so a reply costs no write as it starts. Its ID and Seq are set; in a
	// paused dialog, which answers tool results first, it is not stored
	// and its Seq stays 0.
	Reply *Message
}

// TakeLease is AcquireLease for a run about to start, and returns the
// dialog as the new holder must see it: with everything the previous
// holder saved (and LastSeq counting First). When the lease is won, every
// streaming message of the dialog becomes interrupted (whoever streamed it
// is gone), as MarkInterrupted does, and First is stored. A lease someone
// else holds is ErrConflict; a dialog that is not the tenant's (or not of
// BotID) is ErrNotFound; a dialog handed off or closed is ErrInactive,
// returned with the dialog. Only the caller's lease is ever taken. On
// PostgreSQL all of it is one statement, so starting a run costs one round
// trip, with no read of the dialog before it; on SQLite it is one
// transaction. Either way a failure does nothing.
func (s *Store) TakeLease(ctx context.Context, t Take) (*Dialog, error) {
	if t.First != nil {
		s.fillMessage(t.First)
	}
	if t.Reply != nil {
		t.Reply.Status = MessageStreaming
		s.fillMessage(t.Reply)
	}
	if s.dialect != DialectPostgres {
		return s.takeLeaseInTx(ctx, t)
	}
	return s.takeLeaseStatement(ctx, t)
}

// seqs is how many seqs t stores rows in on a dialog of this status: its
// text's, and the reply's unless the dialog is paused (a paused dialog
// answers tool results first).
func (t Take) seqs(status string) int64 {
	switch {
	case t.First == nil:
		return 0
	case t.Reply == nil || status == DialogPaused:
		return 1
	default:
		return 2
	}
}

// reserveSeqs reads the dialog of t and, when t stores a text, reserves
// the seqs of its rows (Take.seqs) in the same statement. The dialog it
// returns has the new last_seq.
func (s *Store) reserveSeqs(ctx context.Context, t Take) (*Dialog, error) {
	if t.First == nil {
		return s.GetDialog(ctx, t.TenantID, t.DialogID)
	}
	return s.dialogRow(ctx, "take lease", `UPDATE dialogs SET last_seq = last_seq + CASE WHEN status = ? THEN ? ELSE ? END,
  updated_at = ? WHERE tenant_id = ? AND id = ? RETURNING `+dialogColumns,
		DialogPaused, t.seqs(DialogPaused), t.seqs(DialogActive), s.db.NowFunc(), t.TenantID, t.DialogID)
}

// leaseRows are the rows TakeLease stores on d, in the seqs reserveSeqs
// reserved: the text, then the reply's row if any.
func (s *Store) leaseRows(t Take, d *Dialog) []Message {
	reserved := t.seqs(d.Status)
	first := d.LastSeq - reserved + 1
	m := *t.First
	m.TenantID, m.DialogID, m.Seq, m.Status = t.TenantID, t.DialogID, first, MessageComplete
	if d.Status == DialogPaused {
		m.Status = MessageQueued
	}
	rows := []Message{m}
	if reserved > 1 {
		r := *t.Reply
		r.TenantID, r.DialogID, r.Seq, r.BotVersion = t.TenantID, t.DialogID, first+1, d.VersionNumber
		rows = append(rows, r)
	}
	return rows
}

// leaseRefusal says why t does not win a lease on d: d is not the dialog
// of t's bot, d is inactive, or someone else holds it.
func leaseRefusal(t Take, d *Dialog) error {
	switch {
	case t.BotID != "" && d.BotID != t.BotID:
		return wrap("take lease", ErrNotFound)
	case d.Status != DialogActive && d.Status != DialogPaused:
		return wrap("take lease", ErrInactive)
	default:
		return wrap("take lease", ErrConflict)
	}
}

// takeLeaseInTx is TakeLease on SQLite: four statements in a transaction
// that began with SQLite's write lock (_txlock=immediate), so what it reads
// is the last commit of whoever held the lease.
func (s *Store) takeLeaseInTx(ctx context.Context, t Take) (*Dialog, error) {
	var d *Dialog
	err := s.Tx(ctx, func(tx *Store) error {
		var err error
		if d, err = tx.reserveSeqs(ctx, t); err != nil {
			return err
		}
		if refused := leaseRefusal(t, d); !errors.Is(refused, ErrConflict) {
			d.LastSeq -= t.seqs(d.Status) // rolled back with the transaction
			return refused
		}
		ok, err := tx.AcquireLease(ctx, t.TenantID, t.DialogID, t.Owner, t.Now, t.TTL)
		if err != nil || !ok {
			return cmp.Or(err, wrap("take lease", ErrConflict))
		}
		if _, err = tx.MarkInterrupted(ctx, t.TenantID, t.DialogID); err != nil || t.First == nil {
			return err
		}
		rows := tx.leaseRows(t, d)
		if err := tx.q(ctx).Create(&rows).Error; err != nil {
			return wrap("take lease", err)
		}
		*t.First = rows[0]
		if len(rows) > 1 {
			*t.Reply = rows[1]
		}
		return nil
	})
	if errors.Is(err, ErrInactive) {
		return d, err
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}
