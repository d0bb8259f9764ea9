package store

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Close closes the tenant's dialog with reason: it takes no more
// messages, and a run still saving keeps it closed (Dialogs.SaveRun). A dialog
// closed already is ErrInactive, returned with the dialog.
func (di Dialogs) Close(ctx context.Context, id, reason string) (*Dialog, error) {
	s, tenantID := di.s, di.tenant
	d, err := s.dialogRow(ctx, "close dialog", `UPDATE dialogs SET status = 'closed', closed_reason = $3, updated_at = $4
WHERE tenant_id = $1 AND id = $2 AND status <> 'closed' RETURNING `+dialogColumns, tenantID, id, reason, s.db.NowFunc())
	if !errors.Is(err, ErrNotFound) {
		return d, err
	}
	if d, err = di.Get(ctx, id); err != nil {
		return nil, wrap("close dialog", err)
	}
	return d, wrap("close dialog", ErrInactive)
}

// replyStopChannel is the PostgreSQL NOTIFY channel on which Dialogs.StopReply
// asks the process running a dialog to stop its reply; the payload is
// "<tenant id> <dialog id>".
const replyStopChannel = "parley_reply_stop"

// stopReplySQL notifies replyStopChannel for a tenant's dialog when a live
// lease (one that expires after now) says some process runs it, and counts
// the notifications.
const stopReplySQL = `WITH live AS (
  SELECT tenant_id, dialog_id FROM dialog_leases WHERE tenant_id = ? AND dialog_id = ? AND expires_at > ?),
sent AS (SELECT pg_notify('` + replyStopChannel + `', tenant_id || ' ' || dialog_id) FROM live)
SELECT count(*) FROM sent`

// StopReply asks whichever server process runs the tenant's dialog to stop
// its reply, and reports whether one does. On PostgreSQL the ask is a
// notification, heard by the process's Signals.OnReplyStop handler; on SQLite
// only one process serves a data directory, so there is nobody else to ask.
func (di Dialogs) StopReply(ctx context.Context, dialogID string, now time.Time) (bool, error) {
	s, tenantID := di.s, di.tenant
	if s.dialect != DialectPostgres {
		return false, nil
	}
	var n int64
	if err := s.q(ctx).Raw(stopReplySQL, tenantID, dialogID, now.UTC()).Scan(&n).Error; err != nil {
		return false, wrap("stop reply", err)
	}
	return n > 0, nil
}

// OnReplyStop makes stop hear Dialogs.StopReply's asks from every process, and
// starts listening for them (PostgreSQL only; a no-op on SQLite).
func (si Signals) OnReplyStop(stop func(tenantID, dialogID string)) {
	s := si.s
	if s.listener == nil {
		return
	}
	s.listener.setOnStop(stop)
	s.listener.start()
}

// parseStopPayload splits a replyStopChannel payload.
func parseStopPayload(payload string) (tenantID, dialogID string, ok bool) {
	return strings.Cut(payload, " ")
}
