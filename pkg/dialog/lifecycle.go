package dialog

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/webhook"
)

// This file is how a reply or a whole dialog ends before its time: a
// person stops the running reply (CancelReply), or the dialog is closed
// by the bot's end_dialog tool, an operator or the API (CloseDialog).

// MaxCloseReasonChars caps the reason a dialog is closed with.
const MaxCloseReasonChars = 500

// Canceled answers CancelReply.
type Canceled struct {
	DialogID string
	// Canceled says a reply was running and was told to stop; false when
	// none ran (it ended already, or never started): nothing to do.
	Canceled bool
}

// CancelReply stops the reply being generated in the dialog, on this
// process or on whichever process runs it (Dialogs.StopReply). The reply
// ends with stop reason "canceled", its text so far kept (message status
// "canceled"), and the dialog takes the next message as usual. Whoever
// may chat in the dialog may stop its reply.
func (di Dialogs) CancelReply(ctx context.Context, p *platform.Principal, tenant, dialog, origin string) (Canceled, error) {
	r := di.rt
	d, err := r.turnDialog(ctx, p, tenant, dialog, origin)
	if err != nil {
		return Canceled{}, err
	}
	stopped, err := r.Dialogs().stopReply(ctx, d.TenantID, d.ID)
	if err != nil {
		return Canceled{}, err
	}
	return Canceled{DialogID: d.ID, Canceled: stopped}, nil
}

// stopReply stops the dialog's reply here, or asks the process that runs
// it, and reports whether one runs.
func (d Dialogs) stopReply(ctx context.Context, tenantID, dialogID string) (bool, error) {
	r := d.rt
	if r.Dialogs().stopLocal(tenantID, dialogID) {
		return true, nil
	}
	stopped, err := r.store.Tenant(tenantID).Dialogs().StopReply(ctx, dialogID, r.now())
	if err != nil {
		return false, r.internal(ctx, "cancel reply", err)
	}
	return stopped, nil
}

// stopLocal cancels this process's run of the dialog with agent.ErrCanceled
// and reports whether there was one. It also hears other processes' asks
// (Signals.OnReplyStop).
func (d Dialogs) stopLocal(tenantID, dialogID string) bool {
	r := d.rt
	r.mu.Lock()
	defer r.mu.Unlock()
	lr := r.live[liveKey(tenantID, dialogID)]
	if lr == nil || lr.stop == nil {
		return false
	}
	lr.stop(agent.ErrCanceled)
	return true
}

// stoppable is a run's context: a request going away does not end it,
// stopLocal does (with its cause), and so does its cancel func.
func (d Dialogs) stoppable(parent context.Context, lr *liveRun) (context.Context, context.CancelFunc) {
	r := d.rt
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	r.mu.Lock()
	lr.stop = cancel
	r.mu.Unlock()
	return ctx, func() { cancel(nil) }
}

// cutStatus is the status of a streaming reply the loop did not finish.
func cutStatus(out agent.Outcome) string {
	if out.StopReason == agent.StopCanceled {
		return store.MessageCanceled
	}
	return store.MessageInterrupted
}

// Close closes the tenant's dialog with reason, for an operator or
// the API (operators, editors and admin keys): it takes no more messages
// (errDialogClosed), and a reply still running in it is stopped.
func (di Dialogs) Close(ctx context.Context, p *platform.Principal, tenant, dialog, reason string) (Dialog, error) {
	r := di.rt
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActOperate)
	if err != nil {
		return Dialog{}, err
	}
	reason = strings.TrimSpace(reason)
	switch {
	case reason == "":
		return Dialog{}, platform.Invalid(platform.Detail{Pointer: "/reason", Message: "is required: say why the dialog is closed"})
	case utf8.RuneCountInString(reason) > MaxCloseReasonChars:
		return Dialog{}, platform.Invalid(platform.Detail{Pointer: "/reason", Message: "must have at most 500 characters"})
	}
	d, err := r.Dialogs().closeDialog(ctx, tenantID, dialog, reason, closedByPerson)
	if err != nil {
		return Dialog{}, err
	}
	if _, err := r.Dialogs().stopReply(ctx, d.TenantID, d.ID); err != nil {
		r.log.WarnContext(ctx, "dialog: stop the reply of a closed dialog", "dialog", d.ID, "err", err)
	}
	out, err := dialogView(d)
	if err != nil {
		return Dialog{}, r.internal(ctx, "close dialog: view", err)
	}
	return out, nil
}

// Who closed a dialog, for the metric.
const (
	closedByBot    = "bot"
	closedByPerson = "person"
)

// closeDialog stores the dialog closed, with dialog.closed in the same
// commit, and tells its live streams.
func (di Dialogs) closeDialog(ctx context.Context, tenantID, dialogID, reason, by string) (*store.Dialog, error) {
	r := di.rt
	before, err := r.store.Tenant(tenantID).Dialogs().Get(ctx, dialogID)
	if err != nil {
		return nil, r.storeErr(ctx, "close dialog", "dialog", err)
	}
	var d *store.Dialog
	ev := platform.Event{TenantID: tenantID, BotID: before.BotID, DialogID: dialogID, Type: webhook.DialogClosed}
	err = r.svc.Webhooks().WithEvent(ctx, ev, func(st *store.Store) (any, error) {
		var err error
		if d, err = st.Tenant(tenantID).Dialogs().Close(ctx, dialogID, reason); err != nil {
			return nil, err
		}
		// The outcome is computed in the commit that closes the dialog, so
		// dialog.closed carries it.
		if d, err = r.Insights().settle(ctx, st, tenantID, dialogID, true, nil); err != nil {
			return nil, err
		}
		return dialogClosedData{DialogID: dialogID, BotID: before.BotID, Reason: reason, ClosedBy: by,
			Outcome: nullable(d.Outcome), Rating: d.Rating}, nil
	})
	switch {
	case errors.Is(err, store.ErrInactive):
		return nil, errDialogClosed()
	case err != nil:
		return nil, r.storeErr(ctx, "close dialog", "dialog", err)
	}
	r.metrics.closed.WithLabelValues(by).Inc()
	if d.Outcome != "" {
		r.metrics.outcomes.WithLabelValues(d.Outcome).Inc()
	}
	if err := r.Insights().cameBack(ctx, d); err != nil {
		r.log.WarnContext(ctx, "dialog: find dialogs whose question came back", "dialog", d.ID, "err", err)
	}
	r.signal(ctx, tenantID, dialogID, signalChanged)
	return d, nil
}

// errDialogClosed is the answer to anything that would add to a closed
// dialog.
func errDialogClosed() *platform.Error {
	return platform.Errorf(platform.CodeDialogClosed, "this dialog is closed and takes no more messages; start a new one")
}

// endDialog is the end_dialog tool's hook: the run closes its dialog as it
// ends (closeEnded), with the model's reason.
func (run *dialogRun) endDialog(reason string) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		reason = "the bot ended the dialog"
	}
	run.closing.Store(&reason)
}

// closeEnded closes the dialog when the loop called end_dialog, before the
// run's last save (which keeps it closed), so no text joins or follows.
func (run *dialogRun) closeEnded() bool {
	reason := run.closing.Load()
	if reason == nil || run.dialog.Status == DialogClosed {
		return reason != nil
	}
	ctx := context.WithoutCancel(run.ctx)
	d, err := run.r.Dialogs().closeDialog(ctx, run.dialog.TenantID, run.dialog.ID, *reason, closedByBot)
	if err == nil {
		run.dialog.Status, run.dialog.ClosedReason = d.Status, d.ClosedReason
	}
	return true
}
