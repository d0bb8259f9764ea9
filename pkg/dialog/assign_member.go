package dialog

import (
	"context"
	"errors"
	"strings"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/webhook"
)

// AssignTo gives a handed-off dialog to another member of the
// tenant, one who may answer dialogs (not a viewer, not a pending
// invite): a lead dispatches the inbox, or an operator hands a dialog on.
// The dialog may wait, or be the caller's or the member's already; one a
// third operator holds is a conflict. The end user sees the member under
// their email before the @. It writes dialog.handoff_taken, as taking
// does, and an audit entry (dialog.assigned), in one commit.
func (ha Handoffs) AssignTo(ctx context.Context, p *platform.Principal, tenant, dialog, memberID string) (Handoff, error) {
	r := ha.rt
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActOperate)
	if err != nil {
		return Handoff{}, err
	}
	callerID, _, err := operatorOf(p, "")
	if err != nil {
		return Handoff{}, err
	}
	members, err := r.store.Tenant(tenantID).Members().ListWithUsers(ctx)
	if err != nil {
		return Handoff{}, r.internal(ctx, "assign dialog: members", err)
	}
	var member *store.Member
	for i := range members {
		if members[i].UserID == memberID && !members[i].Pending && members[i].Role != auth.RoleViewer {
			member = &members[i]
		}
	}
	if member == nil {
		return Handoff{}, platform.Invalid(platform.Detail{Pointer: "/member", Message: "must be the user id of a member who may answer dialogs"})
	}
	display, _, _ := strings.Cut(member.Email, "@")
	d, err := r.store.Tenant(tenantID).Dialogs().Get(ctx, dialog)
	if err != nil {
		return Handoff{}, r.storeErr(ctx, "assign dialog", "dialog", err)
	}
	before, _ := r.store.Tenant(tenantID).Handoffs().Get(ctx, d.ID) // to count a take once (countTake)
	var h *store.Handoff
	ev := platform.Event{TenantID: tenantID, BotID: d.BotID, DialogID: d.ID, Type: webhook.DialogHandoffTaken}
	err = r.svc.Webhooks().WithEvent(ctx, ev, func(st *store.Store) (any, error) {
		err := st.Tx(ctx, func(tx *store.Store) error {
			var err error
			if h, err = tx.Tenant(tenantID).Handoffs().Transfer(ctx, d.ID, callerID, member.UserID, display, r.now()); err != nil {
				return err
			}
			return r.svc.AuditLog().Record(ctx, tx, p, tenantID, platform.AuditDialogAssigned, d.ID, map[string]any{"member": member.Email})
		})
		return handoffTakenData{DialogID: d.ID, BotID: d.BotID, Operator: display}, err
	})
	if errors.Is(err, store.ErrInactive) && d.Status == DialogClosed {
		return Handoff{}, errDialogClosed()
	}
	if err != nil {
		return Handoff{}, r.Handoffs().handoffErr(ctx, "assign dialog", err)
	}
	r.metrics.handoffs.WithLabelValues("taken").Inc()
	r.Handoffs().countTake(d, before, h)
	r.signal(ctx, tenantID, d.ID, signalChanged)
	return handoffView(d, h)
}
