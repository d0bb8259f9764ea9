package store

import (
	"context"
	"errors"
)

// takeLeaseSQL is Leases.Take on PostgreSQL, in one statement. Its
// arguments are, by number:
//
//	$1 dialog, $2 tenant, $3 owner, $4 expiry, $5 now, $6 bot ('' any)
//	$7, $8  the seqs the rows take in a paused dialog and in an active one (Take.seqs)
//	$9      the dialog's updated_at
//	$10-$22 the text (id '' when none): id, kind, role, content, text, model,
//	        provider, bot version, turn, meta, input and output tokens, created at
//	$23-$26 the reply's row (id '' when none): id, kind, role, created at
//
// The lease is inserted only for a dialog of the tenant (and of the bot)
// that a run may answer; the rows take the dialog's ids from its row, as
// a parameter's type is deduced from its first use and an id's differs
// between a comparison and a select list; the other parts read the lease CTE, so they act
// only when it was won. A lease is won when it is free, expired, the
// owner's own, or held by an instance that is dead (ownerDeadSQL).
//
// The previous holder's last save (state and release in one commit) may
// commit while this statement waits for its lease row, after the
// statement's snapshot was taken: reading the dialog row by updating it
// makes PostgreSQL use the row's latest committed version rather than the
// snapshot's, as it re-checks a streaming row the holder completed
// meanwhile against its committed status.
const takeLeaseSQL = `WITH lease AS (
  INSERT INTO dialog_leases (dialog_id, tenant_id, owner, expires_at, acquired_at)
  SELECT id, tenant_id, $3, $4::timestamptz, $5::timestamptz FROM dialogs
  WHERE tenant_id = $2 AND id = $1 AND status IN ('active', 'paused') AND ($6 = '' OR bot_id = $6)
  ON CONFLICT (dialog_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at, acquired_at = excluded.acquired_at
  WHERE dialog_leases.tenant_id = excluded.tenant_id
    AND (dialog_leases.expires_at < excluded.acquired_at OR dialog_leases.owner = excluded.owner OR ` + ownerDeadSQL + `)
  RETURNING 1),
interrupted AS (
  UPDATE messages SET status = 'interrupted'
  WHERE tenant_id = $2 AND dialog_id = $1 AND status = 'streaming' AND EXISTS (SELECT 1 FROM lease)),
dialog AS (
  UPDATE dialogs SET last_seq = last_seq + CASE WHEN status = 'paused' THEN $7::bigint ELSE $8::bigint END, updated_at = $9
  WHERE tenant_id = $2 AND id = $1 AND EXISTS (SELECT 1 FROM lease)
  RETURNING ` + dialogColumns + `),
first AS (
  INSERT INTO messages (` + messageColumns + `)
  SELECT $10::text, dialog.tenant_id, dialog.id, dialog.last_seq + 1 - CASE WHEN dialog.status = 'paused' THEN $7::bigint ELSE $8::bigint END,
    $11, $12, $13, $14, $15, $16, $17, CASE WHEN dialog.status = 'paused' THEN 'queued' ELSE 'complete' END,
    $18, $19, $20, $21, $22
  FROM dialog WHERE $10::text <> ''
  ON CONFLICT (id) DO NOTHING
  RETURNING seq, status),
reply AS (
  INSERT INTO messages (` + messageColumns + `)
  SELECT $23::text, dialog.tenant_id, dialog.id, dialog.last_seq, $24, $25, '[]', '', '', '', dialog.version_number, 'streaming', 0, '{}', 0, 0, $26
  FROM dialog WHERE $23::text <> '' AND dialog.status <> 'paused'
  RETURNING seq)
SELECT dialog.*, COALESCE((SELECT seq FROM first), 0), COALESCE((SELECT status FROM first), ''),
  COALESCE((SELECT seq FROM reply), 0)
FROM dialog`

// takeLeaseStatement is Leases.Take on PostgreSQL: one statement, so
// starting a run costs one round trip.
func (s *Store) takeLeaseStatement(ctx context.Context, t Take) (*Dialog, error) {
	now := t.Now.UTC()
	first, reply := &Message{}, &Message{}
	if t.First != nil {
		first = t.First
		if t.Reply != nil {
			reply = t.Reply
		}
	}
	rows, err := s.query(ctx, takeLeaseSQL,
		t.DialogID, t.TenantID, t.Owner, now.Add(t.TTL), now, t.BotID,
		t.seqs(DialogPaused), t.seqs(DialogActive), s.db.NowFunc(),
		first.ID, first.Kind, first.Role, first.Content, first.Text, first.Model, first.Provider, first.BotVersion,
		first.Turn, first.Meta, first.InputTokens, first.OutputTokens, first.CreatedAt,
		reply.ID, reply.Kind, reply.Role, reply.CreatedAt)
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
	d, err := s.Tenant(t.TenantID).Dialogs().Get(ctx, t.DialogID)
	if err != nil {
		return nil, err
	}
	if err := leaseRefusal(t, d); !errors.Is(err, ErrInactive) {
		return nil, err
	}
	return d, wrap("take lease", ErrInactive)
}
