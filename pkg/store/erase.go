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
		var found int64
		if err := tx.q(ctx).Model(&Dialog{}).Where("tenant_id = ? AND id = ?", tenantID, id).Count(&found).Error; err != nil {
			return err
		}
		if found == 0 {
			return ErrNotFound
		}
		var err error
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
	out, err := di.eraseWhere(ctx, "erase end user", now, "user_id = ?", userID)
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
		var ids []string
		err := tx.q(ctx).Model(&Dialog{}).Where("tenant_id = ? AND updated_at < ?", tenantID, cutoff.UTC()).
			Where("NOT EXISTS (SELECT 1 FROM dialog_leases WHERE dialog_id = dialogs.id AND expires_at > ?)", now.UTC()).
			Order("updated_at").Limit(limit).Pluck("id", &ids).Error
		if err != nil {
			return err
		}
		out, err = tx.Tenant(tenantID).Dialogs().deleteAll(ctx, ids, now)
		return err
	})
	return out, wrap("delete inactive dialogs", err)
}

// eraseWhere deletes the tenant's dialogs matching cond (with its one
// placeholder bound to arg) batch by batch, skipping those a live run holds.
func (di Dialogs) eraseWhere(ctx context.Context, op string, now time.Time, cond string, arg any) (Erased, error) {
	s, tenantID := di.s, di.tenant
	var total Erased
	after := ""
	for {
		var got Erased
		var ids []string
		err := s.Tx(ctx, func(tx *Store) error {
			ids = nil
			err := tx.q(ctx).Model(&Dialog{}).Where("tenant_id = ?", tenantID).Where(cond, arg).Where("id > ?", after).
				Order("id").Limit(eraseBatch).Pluck("id", &ids).Error
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

// dialogTables are the tables whose rows hang off one dialog by their
// dialog_id and go with it. A channel's conversation names the platform's
// user: it goes with the dialog, and the conversation's next message starts
// anew. A reply still to send into the conversation (channel_jobs) quotes
// the dialog too.
var dialogTables = []string{"dialog_notes", "dialog_reads", "message_feedback", "tool_calls", "messages", "dialog_leases", "pii_vaults", "channel_conversations", "channel_jobs"}

// deleteAll deletes the tenant's dialogs ids and all rows that hang off
// them, except those whose lease is live at now. Run it in a transaction.
// Each table is named, rather than left to ON DELETE CASCADE, so nothing
// depends on SQLite's foreign_keys pragma.
func (di Dialogs) deleteAll(ctx context.Context, ids []string, now time.Time) (Erased, error) {
	s, tenantID := di.s, di.tenant
	var out Erased
	for i := 0; i < len(ids); i++ {
		id := ids[i]
		var held int64
		err := s.q(ctx).Model(&DialogLease{}).Where("tenant_id = ? AND dialog_id = ? AND expires_at > ?", tenantID, id, now.UTC()).Count(&held).Error
		if err != nil {
			return out, err
		}
		if held > 0 {
			out.Running++
			continue
		}
		// A dialog's sub-runs (agents called as tools) hold what it told
		// them: they go with it, once it is not running.
		var children []string
		if err := s.q(ctx).Model(&Dialog{}).Where("tenant_id = ? AND parent_dialog_id = ?", tenantID, id).Pluck("id", &children).Error; err != nil {
			return out, err
		}
		ids = append(ids, children...)
		err = s.q(ctx).Exec(`DELETE FROM idempotency_keys WHERE tenant_id = ? AND message_id <> '' AND message_id IN
  (SELECT id FROM messages WHERE tenant_id = ? AND dialog_id = ?)`, tenantID, tenantID, id).Error
		if err != nil {
			return out, err
		}
		if err := di.deleteEvents(ctx, id); err != nil {
			return out, err
		}
		for _, table := range dialogTables {
			res := s.q(ctx).Exec("DELETE FROM "+table+" WHERE tenant_id = ? AND dialog_id = ?", tenantID, id)
			if res.Error != nil {
				return out, res.Error
			}
			if table == "messages" {
				out.Messages += res.RowsAffected
			}
		}
		res := s.q(ctx).Where("tenant_id = ? AND id = ?", tenantID, id).Delete(&Dialog{})
		if res.Error != nil {
			return out, res.Error
		}
		out.Dialogs += res.RowsAffected
		if res.RowsAffected > 0 {
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
	events := s.q(ctx).Model(&WebhookEvent{}).Select("id").Where("tenant_id = ? AND dialog_id = ?", tenantID, id)
	deliveries := s.q(ctx).Model(&WebhookDelivery{}).Select("id").Where("tenant_id = ? AND event_id IN (?)", tenantID, events)
	if err := s.q(ctx).Where("tenant_id = ? AND delivery_id IN (?)", tenantID, deliveries).Delete(&WebhookAttempt{}).Error; err != nil {
		return err
	}
	if err := s.q(ctx).Where("tenant_id = ? AND event_id IN (?)", tenantID, events).Delete(&WebhookDelivery{}).Error; err != nil {
		return err
	}
	return s.q(ctx).Where("tenant_id = ? AND dialog_id = ?", tenantID, id).Delete(&WebhookEvent{}).Error
}
