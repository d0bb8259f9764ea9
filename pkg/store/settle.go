package store

import "context"

// Settled counts what SettleAbandoned found left by a dead server.
type Settled struct {
	// Interrupted are the replies left streaming, now interrupted.
	Interrupted int64
	// Leases are the dialog leases released.
	Leases int64
	// Claims are the unfinished Idempotency-Key claims released.
	Claims int64
}

// SettleAbandoned settles what a server process that died left behind,
// so a new message to its dialogs is answered at once instead of when its
// leases expire: replies left streaming become interrupted, and every
// dialog lease and unfinished Idempotency-Key claim is released. It acts
// only on a SQLite store opened as the Server, whose lock on the data
// directory makes it the only server: everything any server held then
// belongs to one that is gone. Elsewhere it does nothing: on PostgreSQL
// a dead instance's leases are taken as soon as they are asked for (see
// instance_postgres.go). Call it once, after Migrate, before serving.
func (s *Store) SettleAbandoned(ctx context.Context) (Settled, error) {
	var out Settled
	if s.serverLock == nil {
		return out, nil
	}
	err := s.Tx(ctx, func(tx *Store) error {
		var err error
		if out.Interrupted, err = tx.exec(ctx, `UPDATE messages SET status = 'interrupted' WHERE status = 'streaming'`); err != nil {
			return err
		}
		if out.Leases, err = tx.exec(ctx, `DELETE FROM dialog_leases`); err != nil {
			return err
		}
		out.Claims, err = tx.exec(ctx, `DELETE FROM idempotency_keys WHERE status = 0`)
		return err
	})
	return out, wrap("settle abandoned runs", err)
}
