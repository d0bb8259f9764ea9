package store

import (
	"context"
	"time"
)

// Erased counts what a deletion removed.
type Erased struct {
	Dialogs  int64
	Messages int64
	// Notes are the end user's memory notes (Dialogs.EraseEndUser only).
	Notes int64
	// Running are dialogs left in place because a live run holds their
	// lease; deleting them under the run would lose its writes.
	Running int64
	// IDs are the dialogs deleted.
	IDs []string
}

// eraseBatch bounds how many dialogs one transaction deletes.
const eraseBatch = 100

// Delete deletes the tenant's dialog with its messages, tool calls,
// personal data vault,
// lease, the Idempotency-Key records of its messages and the webhook
// events about it (with their deliveries, delivered or not, and their
// attempts), in one commit. A
// dialog a live run holds (its lease has not expired at now) is
// ErrConflict and stays whole; another tenant's is ErrNotFound.
func (di Dialogs) Delete(ctx context.Context, id string, now time.Time) (Erased, error) {
	s, tenantID := di.s, di.tenant
	var out Erased
	err := s.Tx(ctx, func(tx *Store) error {
		found, err := tx.int64s(ctx, `SELECT 1 FROM dialogs WHERE tenant_id = $1 AND id = $2`, tenantID, id)
		if err != nil {
			return err
		}
		if len(found) == 0 {
			return ErrNotFound
		}
		if out, err = tx.Tenant(tenantID).Dialogs().deleteAll(ctx, []string{id}, now); err != nil {
			return err
		}
		if out.Running > 0 {
			return ErrConflict
		}
		return nil
	})
	return out, wrap("delete dialog", err)
}

// EraseEndUser deletes every dialog of the tenant's end user userID (as
// Dialogs.Delete does), in batches of eraseBatch, each in its own commit,
// then every memory note the tenant's bots keep about the user. Dialogs a
// live run holds are left and counted in Running.
func (di Dialogs) EraseEndUser(ctx context.Context, userID string, now time.Time) (Erased, error) {
	s, tenantID := di.s, di.tenant
	out, err := di.eraseWhere(ctx, "erase end user", now, `user_id = $2`, userID)
	if err != nil {
		return out, err
	}
	out.Notes, err = s.Tenant(tenantID).Memory().DeleteUser(ctx, userID)
	return out, err
}

// DeleteInactive deletes at most limit of the tenant's dialogs whose
// last activity (updated_at, which every stored message bumps) is before
// cutoff, in one commit. Several servers may run it at once: each deletes
// what is still there.
func (di Dialogs) DeleteInactive(ctx context.Context, cutoff, now time.Time, limit int) (Erased, error) {
	s, tenantID := di.s, di.tenant
	var out Erased
	err := s.Tx(ctx, func(tx *Store) error {
		ids, err := tx.strings(ctx, `SELECT id FROM dialogs WHERE tenant_id = $1 AND updated_at < $2
  AND NOT EXISTS (SELECT 1 FROM dialog_leases WHERE dialog_id = dialogs.id AND expires_at > $4)
ORDER BY updated_at LIMIT $3`, tenantID, cutoff.UTC(), limit, now.UTC())
		if err != nil {
			return err
		}
		out, err = tx.Tenant(tenantID).Dialogs().deleteAll(ctx, ids, now)
		return err
	})
	return out, wrap("delete inactive dialogs", err)
}

// eraseWhere deletes the tenant's dialogs matching cond ($1 is the tenant,
// $2 arg) batch by batch, skipping those a live run holds.
func (di Dialogs) eraseWhere(ctx context.Context, op string, now time.Time, cond string, arg any) (Erased, error) {
	s, tenantID := di.s, di.tenant
	var total Erased
	after := ""
	for {
		var got Erased
		var ids []string
		err := s.Tx(ctx, func(tx *Store) error {
			var err error
			ids, err = tx.strings(ctx, `SELECT id FROM dialogs WHERE tenant_id = $1 AND `+cond+` AND id > $3 ORDER BY id LIMIT $4`,
				tenantID, arg, after, eraseBatch)
			if err != nil {
				return err
			}
			got, err = tx.Tenant(tenantID).Dialogs().deleteAll(ctx, ids, now)
			return err
		})
		if err != nil {
			return total, wrap(op, err)
		}
		total.Dialogs += got.Dialogs
		total.Messages += got.Messages
		total.Running += got.Running
		total.IDs = append(total.IDs, got.IDs...)
		if len(ids) < eraseBatch {
			return total, nil
		}
		after = ids[len(ids)-1]
	}
}

// deleteAll deletes the tenant's dialogs ids and all rows that hang off
// them, except those whose lease is live at now. Run it in a transaction.
// Each table is named, rather than left to ON DELETE CASCADE, so nothing
// depends on SQLite's foreign_keys pragma.
func (di Dialogs) deleteAll(ctx context.Context, ids []string, now time.Time) (Erased, error) {
	s, tenantID := di.s, di.tenant
	var out Erased
	for i := 0; i < len(ids); i++ {
		id := ids[i]
		held, err := s.int64s(ctx, `SELECT 1 FROM dialog_leases WHERE tenant_id = $1 AND dialog_id = $2 AND expires_at > $3`,
			tenantID, id, now.UTC())
		if err != nil {
			return out, err
		}
		if len(held) > 0 {
			out.Running++
			continue
		}
		// A dialog's sub-runs (agents called as tools) hold what it told
		// them: they go with it, once it is not running.
		children, err := s.strings(ctx, `SELECT id FROM dialogs WHERE tenant_id = $1 AND parent_dialog_id = $2`, tenantID, id)
		if err != nil {
			return out, err
		}
		ids = append(ids, children...)
		if _, err := s.exec(ctx, `DELETE FROM idempotency_keys WHERE tenant_id = $1 AND message_id <> '' AND message_id IN
  (SELECT id FROM messages WHERE tenant_id = $1 AND dialog_id = $2)`, tenantID, id); err != nil {
			return out, err
		}
		if _, err := s.exec(ctx, `DELETE FROM message_feedback WHERE tenant_id = $1 AND dialog_id = $2`, tenantID, id); err != nil {
			return out, err
		}
		if _, err := s.exec(ctx, `DELETE FROM tool_calls WHERE tenant_id = $1 AND dialog_id = $2`, tenantID, id); err != nil {
			return out, err
		}
		msgs, err := s.exec(ctx, `DELETE FROM messages WHERE tenant_id = $1 AND dialog_id = $2`, tenantID, id)
		if err != nil {
			return out, err
		}
		if _, err := s.exec(ctx, `DELETE FROM dialog_leases WHERE tenant_id = $1 AND dialog_id = $2`, tenantID, id); err != nil {
			return out, err
		}
		if _, err := s.exec(ctx, `DELETE FROM pii_vaults WHERE tenant_id = $1 AND dialog_id = $2`, tenantID, id); err != nil {
			return out, err
		}
		// A channel's conversation names the platform's user: it goes with
		// the dialog, and the conversation's next message starts anew.
		if _, err := s.exec(ctx, `DELETE FROM channel_conversations WHERE tenant_id = $1 AND dialog_id = $2`, tenantID, id); err != nil {
			return out, err
		}
		if err := di.deleteEvents(ctx, id); err != nil {
			return out, err
		}
		dlgs, err := s.exec(ctx, `DELETE FROM dialogs WHERE tenant_id = $1 AND id = $2`, tenantID, id)
		if err != nil {
			return out, err
		}
		out.Messages += msgs
		out.Dialogs += dlgs
		if dlgs > 0 {
			out.IDs = append(out.IDs, id)
		}
	}
	return out, nil
}

// deleteEvents deletes the webhook events about the tenant's dialog
// id, pending or not, with their deliveries and attempts: an event's body
// quotes the dialog's messages, so it goes with them. A deliverer holding
// a claim on one finds it gone when it reports the attempt
// (Outbox.Finish's ErrConflict) and records nothing.
func (di Dialogs) deleteEvents(ctx context.Context, id string) error {
	s, tenantID := di.s, di.tenant
	events := `SELECT id FROM webhook_events WHERE tenant_id = $1 AND dialog_id = $2`
	deliveries := `SELECT id FROM webhook_deliveries WHERE tenant_id = $1 AND event_id IN (` + events + `)`
	for _, q := range []string{
		`DELETE FROM webhook_attempts WHERE tenant_id = $1 AND delivery_id IN (` + deliveries + `)`,
		`DELETE FROM webhook_deliveries WHERE tenant_id = $1 AND event_id IN (` + events + `)`,
		`DELETE FROM webhook_events WHERE tenant_id = $1 AND dialog_id = $2`,
		// A reply still to send into the dialog's conversation quotes it too.
		`DELETE FROM channel_jobs WHERE tenant_id = $1 AND dialog_id = $2`,
	} {
		if _, err := s.exec(ctx, q, tenantID, id); err != nil {
			return err
		}
	}
	return nil
}
