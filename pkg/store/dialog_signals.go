package store

import (
	"context"
	"strings"
	"time"
)

// Signals subscribes this process to the dialog signals and reply stops
// of every tenant: Store.Signals(). Cross-tenant.
type Signals struct{ s *Store }

// dialogSignalChannel is the PostgreSQL NOTIFY channel on which a process
// tells every process that a dialog changed (new messages, a new status)
// or that someone types in it; the payload is "<tenant id> <dialog id>
// <signal>". Live dialog streams wake on it and read the store: the
// notification carries no data, so a missed one costs only latency.
const dialogSignalChannel = "parley_dialog_signal"

// SignalChanged is the signal that a dialog has new messages or a new
// status. Dialogs.SaveRun sends it itself on PostgreSQL, when someone
// listens: while a stream follows the dialog (Dialogs.Follow), and when
// the run hands the dialog off (the operators' inbox).
const SignalChanged = "changed"

// AcrossProcesses says whether Dialogs.Signal reaches other
// processes (PostgreSQL, with every process's Signals.OnDialog hearing it,
// this one's included); on SQLite one process serves a data directory,
// and the caller delivers its signals itself.
func (si Signals) AcrossProcesses() bool {
	s := si.s
	return s.listener != nil
}

// Signal tells every process's Signals.OnDialog handler about the
// tenant's dialog (PostgreSQL only; a no-op on SQLite). signal is one
// word: what happened.
func (di Dialogs) Signal(ctx context.Context, dialogID, signal string) error {
	s, tenantID := di.s, di.tenant
	if s.listener == nil {
		return nil
	}
	_, err := s.exec(ctx, `SELECT pg_notify('`+dialogSignalChannel+`', $1)`, tenantID+" "+dialogID+" "+signal)
	return wrap("signal dialog", err)
}

// Follow marks that a live stream follows the dialog until until, so
// that the runs' saves that commit after it tell every process
// (Dialogs.SaveRun); the stream renews it before it runs out. A save that
// commits before it is one the stream reads once Follow returns: the mark
// and the save both update the dialog's row, so one waits for the other.
// Unmarked dialogs, nearly all of them, cost no notification a turn. A
// no-op on SQLite, whose one process delivers its signals itself.
func (di Dialogs) Follow(ctx context.Context, dialogID string, until time.Time) error {
	s, tenantID := di.s, di.tenant
	if s.listener == nil {
		return nil
	}
	n, err := s.exec(ctx, `UPDATE dialogs SET followed_until = CASE WHEN followed_until > $3 THEN followed_until ELSE $3 END
WHERE tenant_id = $1 AND id = $2`, tenantID, dialogID, until)
	if err == nil && n == 0 {
		err = ErrNotFound
	}
	return wrap("follow dialog", err)
}

// OnDialog makes hear get Dialogs.Signal's signals from every process,
// and starts listening for them (PostgreSQL only; a no-op on SQLite).
func (si Signals) OnDialog(hear func(tenantID, dialogID, signal string)) {
	s := si.s
	if s.listener == nil {
		return
	}
	s.listener.setOnSignal(hear)
	s.listener.start()
}

// parseSignalPayload splits a dialogSignalChannel payload.
func parseSignalPayload(payload string) (tenantID, dialogID, signal string, ok bool) {
	parts := strings.SplitN(payload, " ", 3)
	if len(parts) != 3 {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}
