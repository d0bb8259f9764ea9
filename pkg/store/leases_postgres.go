package store

import (
	"context"
	"errors"
)

// takeLeaseStatement is TakeLease on PostgreSQL: one statement. The lease
// is inserted only for a dialog of the tenant; the other parts read the
// lease CTE, so they act only when it was won. The previous holder's last
// save (state and release in one commit) may commit while this statement
// waits for its lease row, after the statement's snapshot was taken:
// reading the dialog row by updating it, or with FOR SHARE, makes
// PostgreSQL use the row's latest committed version rather than the
// snapshot's, as it re-checks a streaming row the holder completed
// meanwhile against its committed status.
func (s *Store) takeLeaseStatement(ctx context.Context, t Take) (*Dialog, error) {
	rows, err := s.numbered(ctx, leaseStatements[leaseKindOf(t)], s.leaseArgs(t)...).Rows()
	if err != nil {
		return nil, wrap("take lease", err)
	}
	defer rows.Close()
	if rows.Next() {
		var seq, replySeq int64
		var status string
		d, err := scanDialog(rows, &seq, &status, &replySeq)
		if err != nil {
			return nil, wrap("take lease", err)
		}
		if t.First != nil {
			t.First.TenantID, t.First.DialogID, t.First.Seq, t.First.Status = t.TenantID, t.DialogID, seq, status
		}
		if r := t.Reply; r != nil && replySeq != 0 {
			r.TenantID, r.DialogID, r.Seq, r.BotVersion = t.TenantID, t.DialogID, replySeq, d.VersionNumber
		}
		return d, nil
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("take lease", err)
	}
	// Not won: held by someone else, or not a dialog the caller may run.
	d, err := s.GetDialog(ctx, t.TenantID, t.DialogID)
	if err != nil {
		return nil, err
	}
	if err := leaseRefusal(t, d); !errors.Is(err, ErrInactive) {
		return nil, err
	}
	return d, wrap("take lease", ErrInactive)
}

// leaseKind is what shapes the lease statement: whether the take is
// limited to a bot, and which rows it stores besides the lease.
type leaseKind struct {
	bot          bool
	first, reply bool
}

func leaseKindOf(t Take) leaseKind {
	return leaseKind{bot: t.BotID != "", first: t.First != nil, reply: t.First != nil && t.Reply != nil}
}

// leaseStatements holds the lease statement of every kind, numbered for
// the driver once rather than on every turn.
var leaseStatements = func() map[leaseKind]string {
	m := map[leaseKind]string{}
	for _, bot := range []bool{false, true} {
		for _, k := range []leaseKind{{}, {first: true}, {first: true, reply: true}} {
			k.bot = bot
			m[k] = numberPlaceholders(leaseSQL(k))
		}
	}
	return m
}()

// leaseSQL is the lease statement of kind k, with ? placeholders that
// leaseArgs fills in the same order.
func leaseSQL(k leaseKind) string {
	leasable := `tenant_id = ? AND id = ? AND status IN (?, ?)`
	if k.bot {
		leasable += ` AND bot_id = ?`
	}
	query := `WITH lease AS (
  INSERT INTO dialog_leases (dialog_id, tenant_id, owner, expires_at, acquired_at)
  SELECT ?, ?, ?, ?::timestamptz, ?::timestamptz WHERE EXISTS (SELECT 1 FROM dialogs WHERE ` + leasable + `)
  ON CONFLICT (dialog_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at, acquired_at = excluded.acquired_at
  WHERE dialog_leases.tenant_id = excluded.tenant_id AND (dialog_leases.expires_at < ? OR dialog_leases.owner = excluded.owner)
  RETURNING 1 AS won),
interrupted AS (
  UPDATE messages SET status = ? WHERE tenant_id = ? AND dialog_id = ? AND ` + isStreaming + ` AND EXISTS (SELECT 1 FROM lease))
`
	if !k.first {
		return query + `SELECT ` + dialogColumns + `, 0, '', 0 FROM dialogs WHERE tenant_id = ? AND id = ? AND EXISTS (SELECT 1 FROM lease) FOR SHARE`
	}
	// The dialog's counter moves by Take.seqs: the text takes the first
	// seq it reserves, the reply (if stored) the second.
	query += `, dialog AS (
  UPDATE dialogs SET last_seq = last_seq + CASE WHEN status = ? THEN ?::int ELSE ?::int END, updated_at = ?
  WHERE tenant_id = ? AND id = ? AND EXISTS (SELECT 1 FROM lease)
  RETURNING ` + dialogColumns + `),
first AS (
  INSERT INTO messages (` + messageColumns + `)
  SELECT ?, ?, ?, dialog.last_seq + 1 - CASE WHEN dialog.status = ? THEN ?::int ELSE ?::int END, ?, ?, ?, ?, ?, ?, ?,
    CASE WHEN dialog.status = ? THEN ? ELSE ? END, ?, ?, ?, ?, ? FROM dialog
  RETURNING seq, status)`
	if !k.reply {
		return query + `
SELECT dialog.*, first.seq, first.status, 0 FROM dialog, first`
	}
	return query + `,
reply AS (
  INSERT INTO messages (` + messageColumns + `)
  SELECT ?, ?, ?, dialog.last_seq, ?, ?, ?, ?, ?, ?, dialog.version_number, ?, ?, ?, ?, ?, ? FROM dialog WHERE dialog.status <> ?
  RETURNING seq)
SELECT dialog.*, first.seq, first.status, COALESCE((SELECT seq FROM reply), 0) FROM dialog, first`
}

// leaseArgs are the values of leaseSQL(leaseKindOf(t))'s placeholders.
func (s *Store) leaseArgs(t Take) []any {
	now := t.Now.UTC()
	args := make([]any, 0, 54)
	args = append(args, t.DialogID, t.TenantID, t.Owner, now.Add(t.TTL), now, t.TenantID, t.DialogID, DialogActive, DialogPaused)
	if t.BotID != "" {
		args = append(args, t.BotID)
	}
	args = append(args, now, MessageInterrupted, t.TenantID, t.DialogID)
	m := t.First
	if m == nil {
		return append(args, t.TenantID, t.DialogID)
	}
	paused, active := t.seqs(DialogPaused), t.seqs(DialogActive)
	args = append(args, DialogPaused, paused, active, s.db.NowFunc(), t.TenantID, t.DialogID,
		m.ID, t.TenantID, t.DialogID, DialogPaused, paused, active, m.Kind, m.Role, m.Content, m.Text, m.Model, m.Provider, m.BotVersion,
		DialogPaused, MessageQueued, MessageComplete, m.Turn, m.Meta, m.InputTokens, m.OutputTokens, m.CreatedAt)
	r := t.Reply
	if r == nil {
		return args
	}
	return append(args, r.ID, t.TenantID, t.DialogID, r.Kind, r.Role, r.Content, r.Text, r.Model, r.Provider,
		r.Status, r.Turn, r.Meta, r.InputTokens, r.OutputTokens, r.CreatedAt, DialogPaused)
}
