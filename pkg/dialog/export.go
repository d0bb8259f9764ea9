package dialog

import (
	"context"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// exportPage is how many dialogs ExportDialogs reads at a time.
const exportPage = 50

// Export hands emit each of the tenant's dialogs matching f, oldest
// first, with its messages and tool calls. It reads a page of dialogs at a
// time and one dialog's history at a time, so an export of any size holds
// little in memory. It checks the caller and the filter before the first
// emit; an error emit returns stops the export.
func (d Dialogs) Export(ctx context.Context, p *platform.Principal, tenant string, f DialogFilter, emit func(DialogDetail) error) error {
	r := d.rt
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActExport)
	if err != nil {
		return err
	}
	sf, err := r.Dialogs().storeFilter(ctx, tenantID, f)
	if err != nil {
		return err
	}
	detail := map[string]any{"bot": f.Bot, "status": f.Status, "from": f.From, "to": f.To}
	if err := r.svc.AuditLog().Record(ctx, nil, p, tenantID, platform.AuditDialogsExported, "", detail); err != nil {
		return r.internal(ctx, "export dialogs: audit", err)
	}
	page := store.Page{Limit: exportPage}
	for {
		rows, next, err := r.store.Tenant(tenantID).Dialogs().List(ctx, sf, page)
		if err != nil {
			return r.internal(ctx, "export dialogs", err)
		}
		for i := range rows {
			dd, err := r.Dialogs().detail(ctx, &rows[i])
			if err != nil {
				return err
			}
			if err := emit(dd); err != nil {
				return err
			}
		}
		if next == "" {
			return nil
		}
		page.Cursor = next
	}
}

// detail reads d's messages, tool calls and feedback as an admin sees them.
func (di Dialogs) detail(ctx context.Context, d *store.Dialog) (DialogDetail, error) {
	r := di.rt
	t := r.store.Tenant(d.TenantID)
	msgs, err := t.Messages().List(ctx, d.ID, 0)
	if err != nil {
		return DialogDetail{}, r.internal(ctx, "export dialogs: messages", err)
	}
	calls, err := t.Messages().ToolCalls(ctx, d.ID)
	if err != nil {
		return DialogDetail{}, r.internal(ctx, "export dialogs: tool calls", err)
	}
	ratings, err := t.Feedback().List(ctx, d.ID)
	if err != nil {
		return DialogDetail{}, r.internal(ctx, "export dialogs: feedback", err)
	}
	view, err := dialogView(d)
	if err != nil {
		return DialogDetail{}, r.internal(ctx, "export dialogs: view", err)
	}
	out := DialogDetail{Dialog: view, Messages: make([]Message, len(msgs)), ToolCalls: make([]ToolCall, len(calls)),
		Feedback: make([]apiclient.Feedback, len(ratings))}
	for i := range ratings {
		out.Feedback[i] = feedbackView(&ratings[i])
	}
	for i := range msgs {
		out.Messages[i] = messageView(&msgs[i])
	}
	for i := range calls {
		out.ToolCalls[i] = toolCallView(&calls[i])
	}
	return out, nil
}
