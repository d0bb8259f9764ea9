package dialog

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/channel"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/webhook"
)

// Handoffs is the operators' inbox: handed-off dialogs, assignment and replies: reach it with Runtime.Handoffs().
type Handoffs struct{ rt *Runtime }

// Handoffs returns the operators' inbox: handed-off dialogs, assignment and replies.
func (r *Runtime) Handoffs() Handoffs { return Handoffs{r} }

// This file is the human side of a handoff: the inbox of dialogs waiting
// for a person, an operator taking one (AssignDialog), replying as
// themselves (PostOperatorMessage) and giving it back to the bot
// (ReleaseDialog). Closing is CloseDialog (lifecycle.go).

// MaxOperatorNameChars caps the name an operator is shown under.
const MaxOperatorNameChars = 100

// Handoff is a handed-off dialog as the inbox shows it.
type Handoff struct {
	Dialog Dialog
	// RequestedAt is when the bot handed the dialog off.
	RequestedAt time.Time
	// Operator and OperatorName are who took it ("" while it waits);
	// OperatorName is what the end user sees.
	Operator, OperatorName string
	AssignedAt             *time.Time
	// Reason and Summary are what the bot's handoff_to_human call said;
	// LastKind and LastText the newest message with text (ListInbox
	// fills them).
	Reason, Summary    string
	LastKind, LastText string
}

// Inbox is the tenant's handed-off dialogs, the longest waiting first,
// with how many wait for an operator and how many are taken.
type Inbox struct {
	Dialogs        []Handoff
	Waiting, Taken int64
}

// operatorOf is who p is as an operator: a stable id, and the name the
// end user sees (name when given, else the part of a user's email before
// the @, else "Support").
func operatorOf(p *platform.Principal, name string) (id, display string, err error) {
	name = strings.TrimSpace(name)
	if utf8.RuneCountInString(name) > MaxOperatorNameChars {
		return "", "", platform.Invalid(platform.Detail{Pointer: "/name", Message: "must have at most 100 characters"})
	}
	switch p.Kind {
	case platform.KindSession:
		id = p.UserID
		if name == "" {
			name, _, _ = strings.Cut(p.Email, "@")
		}
	case platform.KindKey:
		id = "key:" + p.KeyID
	default:
		id = "platform"
	}
	if name == "" {
		name = "Support"
	}
	return id, name, nil
}

// List returns the tenant's handed-off dialogs for operators.
func (ha Handoffs) List(ctx context.Context, p *platform.Principal, tenant string) (Inbox, error) {
	r := ha.rt
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActOperate)
	if err != nil {
		return Inbox{}, err
	}
	rows, counts, err := r.store.Tenant(tenantID).Handoffs().List(ctx)
	if err != nil {
		return Inbox{}, r.internal(ctx, "list inbox", err)
	}
	ids := make([]string, len(rows))
	for i := range rows {
		ids[i] = rows[i].Dialog.ID
	}
	glimpses, err := r.store.Tenant(tenantID).Handoffs().Glimpses(ctx, ids)
	if err != nil {
		return Inbox{}, r.internal(ctx, "list inbox: glimpses", err)
	}
	out := Inbox{Dialogs: make([]Handoff, 0, len(rows)), Waiting: counts.Waiting, Taken: counts.Taken}
	for i := range rows {
		h, err := handoffView(&rows[i].Dialog, &rows[i].Handoff)
		if err != nil {
			return Inbox{}, r.internal(ctx, "list inbox: view", err)
		}
		g := glimpses[h.Dialog.ID]
		h.Reason, h.Summary, h.LastKind, h.LastText = g.Reason, g.Summary, g.LastKind, g.LastText
		out.Dialogs = append(out.Dialogs, h)
	}
	return out, nil
}

// inboxPause is the least time between two reads of a live inbox: a
// busy tenant's signals (every turn of every dialog sends one) then cost
// each open inbox at most two reads a second.
const inboxPause = 500 * time.Millisecond

// Follow sends the tenant's inbox to sink now and again whenever a
// dialog of the tenant changes, until ctx ends or the server shuts down:
// the operators' live inbox and its count.
func (h Handoffs) Follow(ctx context.Context, p *platform.Principal, tenant string, sink func(Inbox)) error {
	r := h.rt
	in, err := r.Handoffs().List(ctx, p, tenant)
	if err != nil {
		return err
	}
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActOperate)
	if err != nil {
		return err
	}
	heard, stop := r.signals.listen(tenantID, anyDialog)
	defer stop()
	recheck := time.NewTicker(r.opts.LiveRecheck)
	defer recheck.Stop()
	sink(in)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.base.Done():
			return nil // its clients reconnect, here or elsewhere
		case sig := <-heard:
			if sig != signalChanged {
				continue
			}
		case <-recheck.C:
		}
		select { // let a burst of signals settle into one read
		case <-ctx.Done():
			return nil
		case <-time.After(inboxPause):
		}
		if in, err = r.Handoffs().List(ctx, p, tenant); err != nil {
			return err
		}
		sink(in)
	}
}

func handoffView(d *store.Dialog, h *store.Handoff) (Handoff, error) {
	dv, err := dialogView(d)
	return Handoff{Dialog: dv, RequestedAt: h.RequestedAt, Operator: h.AssigneeID, OperatorName: h.AssigneeName,
		AssignedAt: h.AssignedAt}, err
}

// Assign gives a handed-off dialog to the calling operator, shown
// to the end user as name (optional). Of two operators taking it at once
// exactly one wins; the other gets a conflict, as does anyone taking a
// dialog another operator holds. Taking one's own dialog again is fine.
func (ha Handoffs) Assign(ctx context.Context, p *platform.Principal, tenant, dialog, name string) (Handoff, error) {
	r := ha.rt
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActOperate)
	if err != nil {
		return Handoff{}, err
	}
	id, display, err := operatorOf(p, name)
	if err != nil {
		return Handoff{}, err
	}
	d, err := r.store.Tenant(tenantID).Dialogs().Get(ctx, dialog)
	if err != nil {
		return Handoff{}, r.storeErr(ctx, "assign dialog", "dialog", err)
	}
	h, err := r.Handoffs().assign(ctx, d, id, display)
	if err != nil {
		return Handoff{}, err
	}
	return handoffView(d, h)
}

// assign is AssignDialog once the operator is known: one conditional
// update with dialog.handoff_taken in its commit.
func (ha Handoffs) assign(ctx context.Context, d *store.Dialog, id, display string) (*store.Handoff, error) {
	r := ha.rt
	// As it was, to count a take only once (countTake); without it the
	// take still happens, uncounted.
	before, _ := r.store.Tenant(d.TenantID).Handoffs().Get(ctx, d.ID)
	var h *store.Handoff
	ev := platform.Event{TenantID: d.TenantID, BotID: d.BotID, DialogID: d.ID, Type: webhook.DialogHandoffTaken}
	err := r.svc.Webhooks().WithEvent(ctx, ev, func(st *store.Store) (any, error) {
		var err error
		h, err = st.Tenant(d.TenantID).Handoffs().Assign(ctx, d.ID, id, display, r.now())
		return handoffTakenData{DialogID: d.ID, BotID: d.BotID, Operator: display}, err
	})
	if errors.Is(err, store.ErrInactive) && d.Status == DialogClosed {
		return nil, errDialogClosed()
	}
	if err != nil {
		return nil, r.Handoffs().handoffErr(ctx, "assign dialog", err)
	}
	r.metrics.handoffs.WithLabelValues("taken").Inc()
	r.Handoffs().countTake(d, before, h)
	r.signal(ctx, d.TenantID, d.ID, signalChanged)
	return h, nil
}

// handoffErr maps the store's answers to an operator's action on a
// dialog that is not (or no longer) theirs to act on.
func (h Handoffs) handoffErr(ctx context.Context, op string, err error) error {
	r := h.rt
	switch {
	case errors.Is(err, store.ErrConflict):
		return platform.Errorf(platform.CodeConflict, "another operator has taken this dialog")
	case errors.Is(err, store.ErrInactive):
		return platform.Errorf(platform.CodeConflict, "this dialog is not handed off to a person")
	}
	return r.storeErr(ctx, op, "dialog", err)
}

// Post stores text as the calling operator's message in a
// handed-off dialog, taking it first when it still waits (as AssignDialog
// would; one another operator holds is a conflict). The end user sees it
// (Follow), the transcript shows it, and the bot, once the dialog is
// back, reads it as a note on the user's side, never as its own words.
func (ha Handoffs) Post(ctx context.Context, p *platform.Principal, tenant, dialog, text string) (Message, error) {
	r := ha.rt
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActOperate)
	if err != nil {
		return Message{}, err
	}
	if err := checkText(text); err != nil {
		return Message{}, err
	}
	id, display, err := operatorOf(p, "")
	if err != nil {
		return Message{}, err
	}
	d, err := r.store.Tenant(tenantID).Dialogs().Get(ctx, dialog)
	if err != nil {
		return Message{}, r.storeErr(ctx, "operator message", "dialog", err)
	}
	h, err := r.store.Tenant(tenantID).Handoffs().Get(ctx, dialog)
	switch {
	case errors.Is(err, store.ErrInactive) && d.Status == DialogClosed:
		return Message{}, errDialogClosed()
	case err != nil:
		return Message{}, r.Handoffs().handoffErr(ctx, "operator message", err)
	case h.AssigneeID != id:
		if h, err = r.Handoffs().assign(ctx, d, id, display); err != nil {
			return Message{}, err
		}
	}
	row, err := storeMessage(d, agent.Message{Kind: agent.KindOperator, Message: llm.Message{Role: llm.Role(RoleOperator),
		Content: []llm.Block{{Type: llm.BlockText, Text: text}}}, Author: h.AssigneeName, Time: r.now()})
	if err != nil {
		return Message{}, r.internal(ctx, "operator message", err)
	}
	hooked, err := r.svc.Webhooks().Subscribes(ctx, tenantID, webhook.MessageCreated)
	if err != nil {
		return Message{}, r.internal(ctx, "operator message: webhooks", err)
	}
	if err := r.writeMessage(ctx, hooked, d, row, operatorWrite(ctx, d, row, text)); err != nil {
		return Message{}, r.internal(ctx, "operator message", err)
	}
	r.Handoffs().countOperatorResponse(ctx, d, h, row)
	r.Handoffs().countOperatorReply(ctx, d, h, row)
	r.signal(ctx, tenantID, d.ID, signalChanged)
	return messageView(row), nil
}

// chatChannels are the channel kinds whose end users read replies on
// their platform (Telegram, Slack), where an operator's message must be
// sent too; a webhook channel's backend gets it as message.created.
var chatChannels = map[string]bool{channel.KindTelegram: true, channel.KindSlack: true}

// operatorWrite stores an operator's message; in a dialog of a Telegram
// or Slack conversation it also queues the text for the platform, in the
// same commit, so the end user gets it even if this server dies next.
func operatorWrite(ctx context.Context, d *store.Dialog, row *store.Message, text string) func(st *store.Store) error {
	if !chatChannels[d.Channel] {
		return func(st *store.Store) error { return st.Tenant(row.TenantID).Messages().Append(ctx, row) }
	}
	return func(st *store.Store) error {
		return st.Tx(ctx, func(tx *store.Store) error {
			if err := tx.Tenant(row.TenantID).Messages().Append(ctx, row); err != nil {
				return err
			}
			_, err := tx.Tenant(d.TenantID).Channels().QueueReply(ctx, d.ID, text)
			return err
		})
	}
}

// RoleOperator is the role of an operator's message: neither the user's
// nor the bot's.
const RoleOperator = "operator"

// Release gives a handed-off dialog back to the bot: it answers the
// next message, seeing what the operator said. Any operator may release
// it, so a dialog whose operator left is not stuck.
func (ha Handoffs) Release(ctx context.Context, p *platform.Principal, tenant, dialog string) (Dialog, error) {
	r := ha.rt
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActOperate)
	if err != nil {
		return Dialog{}, err
	}
	d, err := r.store.Tenant(tenantID).Dialogs().Get(ctx, dialog)
	if err != nil {
		return Dialog{}, r.storeErr(ctx, "release dialog", "dialog", err)
	}
	ev := platform.Event{TenantID: tenantID, BotID: d.BotID, DialogID: d.ID, Type: webhook.DialogHandoffReleased}
	err = r.svc.Webhooks().WithEvent(ctx, ev, func(st *store.Store) (any, error) {
		h, err := st.Tenant(tenantID).Handoffs().Release(ctx, dialog)
		if err != nil {
			return nil, err
		}
		return handoffTakenData{DialogID: d.ID, BotID: d.BotID, Operator: h.AssigneeName}, nil
	})
	if errors.Is(err, store.ErrInactive) && d.Status == DialogClosed {
		return Dialog{}, errDialogClosed()
	}
	if err != nil {
		return Dialog{}, r.Handoffs().handoffErr(ctx, "release dialog", err)
	}
	r.metrics.handoffs.WithLabelValues("released").Inc()
	r.signal(ctx, tenantID, d.ID, signalChanged)
	d.Status = DialogActive
	out, err := dialogView(d)
	if err != nil {
		return Dialog{}, r.internal(ctx, "release dialog: view", err)
	}
	return out, nil
}
