package store

import "context"

// Abandoned settles what a crashed process left in every tenant:
// Store.Abandoned(). Cross-tenant.
type Abandoned struct{ s *Store }

// Settled counts what Abandoned.Settle found left by a dead server.
type Settled struct {
	// Interrupted are the replies left streaming, now interrupted.
	Interrupted int64
	// Leases are the dialog leases released.
	Leases int64
}

// Settle settles what a server process that died left behind,
// so a new message to its dialogs is answered at once instead of when its
// leases expire: replies left streaming become interrupted, and every
// dialog lease is released. (Its unfinished Idempotency-Key claims are
// handed to the client's retry when it comes, see Idempotency.Claim.) It acts
// only on a SQLite store opened as the Server, whose lock on the data
// directory makes it the only server: everything any server held then
// belongs to one that is gone. On PostgreSQL, opened as a Server, it
// settles the dialogs of instances that are dead (see
// instance_postgres.go) alike, which others would take over only when
// asked. Elsewhere it
// does nothing. Call it once, after Migrate, before serving.
func (a Abandoned) Settle(ctx context.Context) (Settled, error) {
	s := a.s
	var out Settled
	if s.instance != nil {
		err := s.q(ctx).Raw(settleDeadInstancesSQL, s.instance.id).Row().Scan(&out.Leases, &out.Interrupted)
		return out, wrap("settle dead instances", err)
	}
	if s.serverLock == nil {
		return out, nil
	}
	err := s.Tx(ctx, func(tx *Store) error {
		res := tx.q(ctx).Exec("UPDATE messages SET status = 'interrupted' WHERE status = 'streaming'")
		if res.Error != nil {
			return res.Error
		}
		out.Interrupted = res.RowsAffected
		res = tx.q(ctx).Exec("DELETE FROM dialog_leases")
		out.Leases = res.RowsAffected
		return res.Error
	})
	return out, wrap("settle abandoned runs", err)
}

// settleDeadInstancesSQL releases the leases whose owner is an instance
// other than $1 whose liveness lock is free, marks their dialogs'
// streaming replies interrupted, and returns both counts.
const settleDeadInstancesSQL = `WITH dead AS (
  DELETE FROM dialog_leases
  WHERE CASE WHEN owner LIKE '` + instancePrefix + `%' AND split_part(owner, '/', 1) <> ?
    THEN pg_try_advisory_xact_lock(hashtextextended(split_part(owner, '/', 1), 0)) ELSE false END
  RETURNING tenant_id, dialog_id),
interrupted AS (
  UPDATE messages SET status = 'interrupted' FROM dead
  WHERE messages.tenant_id = dead.tenant_id AND messages.dialog_id = dead.dialog_id AND messages.status = 'streaming'
  RETURNING 1)
SELECT (SELECT count(*) FROM dead), (SELECT count(*) FROM interrupted)`
