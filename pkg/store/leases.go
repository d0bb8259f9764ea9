package store

import (
	"context"
	"errors"
	"time"
)

// Leases are a tenant's dialog leases: reach them with Store.Tenant(id).Leases().
type Leases struct{ scope }

// DialogLease says which process runs a dialog's loop, until when. One
// loop per dialog at a time keeps two replies from interleaving.
type DialogLease struct {
	DialogID   string `gorm:"primaryKey"`
	TenantID   string
	Owner      string
	ExpiresAt  time.Time
	AcquiredAt time.Time
}

// acquireLeaseSQL takes the lease of dialog $1 of tenant $2 for owner $3
// until $4, acquired at $5: an insert that, on conflict, updates only an
// expired lease or the owner's own, so two processes racing cannot both
// win.
const acquireLeaseSQL = `INSERT INTO dialog_leases (dialog_id, tenant_id, owner, expires_at, acquired_at)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (dialog_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at, acquired_at = excluded.acquired_at
WHERE dialog_leases.tenant_id = excluded.tenant_id
  AND (dialog_leases.expires_at < excluded.acquired_at OR dialog_leases.owner = excluded.owner)`

// Acquire makes owner the holder of the tenant's dialog's lease until
// now+ttl, when nobody holds it, its holder's lease expired, or owner
// already holds it. It reports whether owner got it.
func (le Leases) Acquire(ctx context.Context, dialogID, owner string, now time.Time, ttl time.Duration) (bool, error) {
	s, tenantID := le.s, le.tenant
	now = now.UTC()
	n, err := s.exec(ctx, acquireLeaseSQL, dialogID, tenantID, owner, now.Add(ttl), now)
	if err != nil {
		return false, wrap("acquire lease", err)
	}
	return n == 1, nil
}

// Renew extends owner's lease to now+ttl. A lease owner no longer
// holds (it expired and was taken over) is ErrConflict: the caller must
// stop writing to the dialog.
func (le Leases) Renew(ctx context.Context, dialogID, owner string, now time.Time, ttl time.Duration) error {
	s, tenantID := le.s, le.tenant
	n, err := s.exec(ctx, `UPDATE dialog_leases SET expires_at = $4 WHERE tenant_id = $1 AND dialog_id = $2 AND owner = $3`,
		tenantID, dialogID, owner, now.UTC().Add(ttl))
	if err != nil {
		return wrap("renew lease", err)
	}
	if n == 0 {
		return wrap("renew lease", ErrConflict)
	}
	return nil
}

// releaseLeaseSQL deletes owner $3's lease of dialog $2 of tenant $1.
const releaseLeaseSQL = `DELETE FROM dialog_leases WHERE tenant_id = $1 AND dialog_id = $2 AND owner = $3`

// Release gives up owner's lease; releasing a lease one does not hold
// does nothing.
func (le Leases) Release(ctx context.Context, dialogID, owner string) error {
	s, tenantID := le.s, le.tenant
	_, err := s.exec(ctx, releaseLeaseSQL, tenantID, dialogID, owner)
	return wrap("release lease", err)
}

// Get returns the tenant's dialog's lease, expired or not.
func (le Leases) Get(ctx context.Context, dialogID string) (*DialogLease, error) {
	s, tenantID := le.s, le.tenant
	var l DialogLease
	if err := s.q(ctx).Where("tenant_id = ? AND dialog_id = ?", tenantID, dialogID).First(&l).Error; err != nil {
		return nil, wrap("get lease", err)
	}
	return &l, nil
}

// Take asks Leases.Take for a dialog's lease.
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
	// no user text may precede). Its ID, Seq and Status are set. A First
	// whose ID is a stored message's (the request that chose the id died
	// after storing it) is not stored again: its Seq stays 0.
	First *Message
	// Reply, when set with First, is the row of the reply the run is about
	// to stream (its Kind, Role and CreatedAt; it starts empty), stored
	// streaming right after First in an active dialog,
	// so a reply costs no write as it starts. Its ID and Seq are set; in a
	// paused dialog, which answers tool results first, it is not stored
	// and its Seq stays 0.
	Reply *Message
}

// Take is Leases.Acquire for a run about to start, and returns the
// dialog as the new holder must see it: with everything the previous
// holder saved (and LastSeq counting First). When the lease is won, every
// streaming message of the dialog becomes interrupted (whoever streamed it
// is gone), as Messages.MarkInterrupted does, and First is stored. A lease someone
// else holds is ErrConflict; a dialog that is not the tenant's (or not of
// BotID) is ErrNotFound; a dialog handed off or closed is ErrInactive,
// returned with the dialog. Only the caller's lease is ever taken. On
// PostgreSQL all of it is one statement, so starting a run costs one round
// trip, with no read of the dialog before it; on SQLite it is one
// transaction. Either way a failure does nothing.
func (le Leases) Take(ctx context.Context, t Take) (*Dialog, error) {
	s := le.s
	t.TenantID = le.tenant
	if t.First != nil {
		s.fillMessage(t.First)
	}
	if r := t.Reply; r != nil {
		*r = Message{ID: r.ID, Kind: r.Kind, Role: r.Role, CreatedAt: r.CreatedAt, Status: MessageStreaming}
		s.fillMessage(r)
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

// leaseRows are the rows Leases.Take stores on d, whose last_seq counts
// them already: the text, then the reply's row if any.
func (s *Store) leaseRows(t Take, d *Dialog) []Message {
	reserved := t.seqs(d.Status)
	m := *t.First
	m.TenantID, m.DialogID, m.Seq, m.Status = t.TenantID, t.DialogID, d.LastSeq-reserved+1, MessageComplete
	if d.Status == DialogPaused {
		m.Status = MessageQueued
	}
	rows := []Message{m}
	if reserved > 1 {
		r := *t.Reply
		r.TenantID, r.DialogID, r.Seq, r.BotVersion = t.TenantID, t.DialogID, m.Seq+1, d.VersionNumber
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

// reserveSeqsSQL reads dialog $2 of tenant $1 by updating it, and
// reserves the seqs of a take's rows: $3 in a paused dialog, $4 in
// another (Take.seqs).
const reserveSeqsSQL = `UPDATE dialogs SET last_seq = last_seq + CASE WHEN status = 'paused' THEN $3 ELSE $4 END, updated_at = $5
WHERE tenant_id = $1 AND id = $2 RETURNING ` + dialogColumns

// takeLeaseInTx is Leases.Take on SQLite: one transaction that began with
// SQLite's write lock (_txlock=immediate), so what it reads is the last
// commit of whoever held the lease.
func (s *Store) takeLeaseInTx(ctx context.Context, t Take) (*Dialog, error) {
	var d *Dialog
	err := s.Tx(ctx, func(tx *Store) error {
		var err error
		d, err = tx.dialogRow(ctx, "take lease", reserveSeqsSQL, t.TenantID, t.DialogID,
			t.seqs(DialogPaused), t.seqs(DialogActive), s.db.NowFunc())
		if err != nil {
			return err
		}
		if refused := leaseRefusal(t, d); !errors.Is(refused, ErrConflict) {
			d.LastSeq -= t.seqs(d.Status) // rolled back with the transaction
			return refused
		}
		now := t.Now.UTC()
		won, err := tx.exec(ctx, acquireLeaseSQL, t.DialogID, t.TenantID, t.Owner, now.Add(t.TTL), now)
		if err != nil {
			return wrap("take lease", err)
		}
		if won == 0 {
			return wrap("take lease", ErrConflict)
		}
		if _, err := tx.exec(ctx, markInterruptedSQL, t.TenantID, t.DialogID); err != nil {
			return wrap("take lease", err)
		}
		if t.First == nil {
			return nil
		}
		rows := tx.leaseRows(t, d)
		query, args := insertMessageSQL, messageArgs(&rows[0])
		if len(rows) > 1 {
			query, args = insertTwoMessagesSQL, append(args, messageArgs(&rows[1])...)
		}
		stored, err := tx.exec(ctx, query+` ON CONFLICT (id) DO NOTHING`, args...)
		if err != nil {
			return wrap("take lease", err)
		}
		if stored < int64(len(rows)) {
			rows[0].Seq = 0 // the text was stored already, by a request that died (the reply's id is new)
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
