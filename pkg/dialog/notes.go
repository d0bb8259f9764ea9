package dialog

import (
	"context"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// This file is the members' internal notes on a dialog: what one
// operator tells the next ("refund already promised"). They are kept
// apart from the messages, so neither the end user's stream nor the bot's
// history ever holds them, and go with the dialog when it is deleted or
// erased.

// noteView is n as callers see it.
func noteView(n *store.DialogNote) apiclient.Note {
	return apiclient.Note{ID: n.ID, DialogID: n.DialogID, Author: n.AuthorID, AuthorName: n.AuthorName, Text: n.Text, CreatedAt: n.CreatedAt}
}

// AddNote stores text as the caller's internal note on the tenant's
// dialog, and tells the members who follow the dialog.
func (h Handoffs) AddNote(ctx context.Context, p *platform.Principal, tenant, dialog, text string) (apiclient.Note, error) {
	r := h.rt
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActOperate)
	if err != nil {
		return apiclient.Note{}, err
	}
	if err := checkText(text); err != nil {
		return apiclient.Note{}, err
	}
	id, display, err := operatorOf(p, "")
	if err != nil {
		return apiclient.Note{}, err
	}
	n := store.DialogNote{DialogID: dialog, AuthorID: id, AuthorName: display, Text: text, CreatedAt: r.now()}
	if err := r.store.Tenant(tenantID).DialogNotes().Add(ctx, &n); err != nil {
		return apiclient.Note{}, r.storeErr(ctx, "add note", "dialog", err)
	}
	return noteView(&n), nil
}

// ListNotes returns the internal notes on the tenant's dialog, oldest
// first.
func (h Handoffs) ListNotes(ctx context.Context, p *platform.Principal, tenant, dialog string) ([]apiclient.Note, error) {
	r := h.rt
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActOperate)
	if err != nil {
		return nil, err
	}
	if _, err := r.store.Tenant(tenantID).Dialogs().Get(ctx, dialog); err != nil {
		return nil, r.storeErr(ctx, "list notes", "dialog", err)
	}
	rows, err := r.store.Tenant(tenantID).DialogNotes().List(ctx, dialog)
	if err != nil {
		return nil, r.internal(ctx, "list notes", err)
	}
	out := make([]apiclient.Note, 0, len(rows))
	for i := range rows {
		out = append(out, noteView(&rows[i]))
	}
	return out, nil
}
