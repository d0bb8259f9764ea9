package dialog

import (
	"context"
	"errors"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// Erased counts what a deletion removed.
type Erased struct {
	Dialogs  int64
	Messages int64
	// MemoryNotes are the notes bots kept about the end user.
	MemoryNotes int64
}

// errRunning answers a deletion of a dialog whose reply is being written.
func errRunning(what string) *platform.Error {
	return platform.Errorf(platform.CodeConflict, "%s; retry when the reply is done", what)
}

// Delete deletes the tenant's dialog with everything stored about
// it: messages, tool calls, its lease, its pending state and the
// Idempotency-Key records of its messages. A dialog whose reply is being
// generated (a live run here or on another server) is a conflict and
// stays whole: deleting it under the run would lose what the run writes
// next, and the run may be mid-way through a tool call.
func (d Dialogs) Delete(ctx context.Context, p *platform.Principal, tenant, dialog string) error {
	r := d.rt
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActErase)
	if err != nil {
		return err
	}
	if r.Dialogs().running(tenantID, dialog) {
		return errRunning("this dialog is answering a message")
	}
	err = r.store.Tx(ctx, func(tx *store.Store) error {
		if _, err := tx.Tenant(tenantID).Dialogs().Delete(ctx, dialog, r.now()); err != nil {
			return err
		}
		return r.svc.AuditLog().Record(ctx, tx, p, tenantID, platform.AuditDialogDeleted, dialog, nil)
	})
	if errors.Is(err, store.ErrConflict) {
		return errRunning("this dialog is answering a message")
	}
	if err != nil {
		return r.storeErr(ctx, "delete dialog", "dialog", err)
	}
	r.history.forget(tenantID, dialog)
	r.metrics.deleted.WithLabelValues("request").Inc()
	return nil
}

// EraseEndUser deletes every dialog of the tenant's end user userID (the
// user_id a dialog was created with, or a signed token's sub) with all
// that DeleteDialog deletes, and every memory note the tenant's bots keep
// about the user, and returns the counts. When some of the
// user's dialogs are answering a message those are left and the result is
// a conflict: a retry erases the rest.
func (d Dialogs) EraseEndUser(ctx context.Context, p *platform.Principal, tenant, userID string) (Erased, error) {
	r := d.rt
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActErase)
	if err != nil {
		return Erased{}, err
	}
	if err := checkUserID(userID); err != nil {
		return Erased{}, err
	}
	got, err := r.store.Tenant(tenantID).Dialogs().EraseEndUser(ctx, userID, r.now())
	if err != nil {
		return Erased{}, r.internal(ctx, "erase end user", err)
	}
	for _, id := range got.IDs {
		r.history.forget(tenantID, id)
	}
	r.metrics.deleted.WithLabelValues("erasure").Add(float64(got.Dialogs))
	r.metrics.notes.WithLabelValues("erased").Add(float64(got.Notes))
	// Recorded after the batches (each its own commit), and naming the user
	// only by a keyed digest (platform.Service.AuditLog().EndUserDigest): the log keeps
	// no more of the user than erasure left.
	if err := r.svc.AuditLog().Record(ctx, nil, p, tenantID, platform.AuditEndUserErased, r.svc.AuditLog().EndUserDigest(tenantID, userID),
		map[string]any{"dialogs": got.Dialogs, "messages": got.Messages, "memory_notes": got.Notes, "kept_running": got.Running}); err != nil {
		return Erased{}, r.internal(ctx, "erase end user: audit", err)
	}
	if got.Running > 0 {
		return Erased{Dialogs: got.Dialogs, Messages: got.Messages, MemoryNotes: got.Notes},
			errRunning("some of this user's dialogs are answering a message and were kept")
	}
	return Erased{Dialogs: got.Dialogs, Messages: got.Messages, MemoryNotes: got.Notes}, nil
}

// running reports whether a run of this process answers the dialog.
func (d Dialogs) running(tenantID, dialogID string) bool {
	r := d.rt
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live[liveKey(tenantID, dialogID)] != nil
}
