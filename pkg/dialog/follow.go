package dialog

import (
	"context"
	"errors"
	"time"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// This file is a dialog's live stream for its end user (and for the
// operators' inbox): messages nobody asked for in the same request (an
// operator's, a reply to a text sent from another tab), the dialog's
// handoff status and who is typing.
//
// The design keeps costs flat: the stream's position is the seq of the
// last message it sent (the SSE event id, so Last-Event-ID resumes it
// exactly), and it reads the store only when woken: by a signal that the
// dialog changed (signals.go: in process on SQLite, PostgreSQL NOTIFY
// across processes, sent for the dialogs a stream marked it follows), or
// by a slow re-check that covers a notification lost while the listener
// reconnected. An idle stream costs a goroutine, one indexed read every
// Options.LiveRecheck and its mark's renewal every minute; no stream
// polls.

// defaultLiveRecheck is how often a stream re-reads its dialog without a
// signal (Options.LiveRecheck).
const defaultLiveRecheck = 30 * time.Second

// followMark is how long a stream's mark on its dialog lasts
// (store.Dialogs.Follow): only a marked dialog's saves tell the other
// processes. A stream renews it when half is gone, so it runs out only
// minutes after the stream has.
const followMark = 2 * time.Minute

// maxFollowBatch caps the messages one read of a stream sends.
const maxFollowBatch = 100

// OperatorMessageEvent carries an operator's message to the end user.
type OperatorMessageEvent struct {
	Message Message
}

// HandoffEvent says where a dialog stands: status is its status (active,
// paused, handoff, closed); Operator the name of the person who took a
// handed-off dialog, "" while it waits for one.
type HandoffEvent struct {
	Status   string
	Operator string
}

// TypingEvent says someone writes in the dialog: Who is "operator" (with
// Name, the name the end user sees) or "user".
type TypingEvent struct {
	Who, Name string
}

// Type is the event's "type" field.
func (OperatorMessageEvent) Type() string { return "operator_message" }

// Type is the event's "type" field.
func (HandoffEvent) Type() string { return "handoff" }

// Type is the event's "type" field.
func (TypingEvent) Type() string { return "typing" }

// FollowSink receives a stream's events; id is the seq of a message
// event (its resume point), 0 for the others.
type FollowSink func(id int64, e agent.Event)

// Follow streams the dialog's messages after seq after, then what happens
// in it, to sink until ctx ends or the dialog is closed. It starts with a
// HandoffEvent saying where the dialog stands, and sends another whenever
// that changes. A widget's pk_ key (at one of its origins) and chat keys
// follow the dialogs they may chat in; signed-in users the dialogs they
// may read. What a pk_ key sees is what the widget sees of a turn: the
// user's, the bot's and the operators' messages, with the bot's hidden
// tools taken out.
func (r *Runtime) Follow(ctx context.Context, p *platform.Principal, tenant, dialog, origin string, after int64, sink FollowSink) error {
	d, err := r.followDialog(ctx, p, tenant, dialog, origin)
	if err != nil {
		return err
	}
	var view *endUserView
	if p.KeyKind == auth.KindPublishable {
		bot, err := r.botFor(ctx, d)
		if err != nil {
			return err
		}
		view = viewFor(p, bot)
	}
	// Each side hears the other type and read, not itself.
	f := &follower{r: r, tenantID: d.TenantID, dialogID: d.ID, after: max(after, 0), view: view, sink: sink,
		side: r.Presence().sideOf(ctx, p, tenant), reads: map[string]int64{}}
	heard, stop := r.signals.listen(d.TenantID, d.ID)
	defer stop()
	// The mark goes before the first read: what a save commits after the
	// read, it signals.
	if err := f.mark(ctx); err != nil {
		return err
	}
	recheckEvery := min(r.opts.LiveRecheck, followMark/2)
	recheck := time.NewTimer(recheckEvery)
	defer recheck.Stop()
	if err := f.catchUp(ctx); err != nil || f.status == DialogClosed {
		return err
	}
	if err := f.readMarks(ctx); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.base.Done():
			sink(0, restartingEvent()) // the client resumes, here or elsewhere
			return nil
		case sig := <-heard:
			if f.heard(ctx, sig) {
				continue
			}
		case <-recheck.C:
		}
		recheck.Reset(recheckEvery)
		if r.now().After(f.renewAt) {
			if err := f.mark(ctx); err != nil {
				return err
			}
		}
		if err := f.catchUp(ctx); err != nil || f.status == DialogClosed {
			return err
		}
	}
}

// mark tells the store the stream follows its dialog for followMark more,
// so that the dialog's saves in every process signal it.
func (f *follower) mark(ctx context.Context) error {
	now := f.r.now()
	if err := f.r.store.Tenant(f.tenantID).Dialogs().Follow(ctx, f.dialogID, now.Add(followMark)); err != nil {
		return f.failed(ctx, err)
	}
	f.renewAt = now.Add(followMark / 2)
	return nil
}

// heard passes on what a typing or read signal says to the stream's
// viewer, and says whether sig was one of those: the others mean "read
// the store".
func (f *follower) heard(ctx context.Context, sig string) bool {
	switch sig {
	case signalTypingOperator:
		if f.side == store.ReadByUser {
			f.sink(0, TypingEvent{Who: "operator", Name: f.operator})
		}
	case signalTypingUser:
		if f.side == store.ReadByOperator {
			f.sink(0, TypingEvent{Who: "user"})
		}
	case signalRead:
		if err := f.readMarks(ctx); err != nil {
			f.r.log.WarnContext(ctx, "dialog: read marks", "dialog", f.dialogID, "err", err)
		}
	default:
		return false
	}
	return true
}

// readMarks sends the other side's read mark when it moved since the
// stream last said it.
func (f *follower) readMarks(ctx context.Context) error {
	marks, err := f.r.store.Tenant(f.tenantID).DialogReads().Of(ctx, f.dialogID)
	if err != nil {
		return f.failed(ctx, err)
	}
	for side, m := range marks {
		if side == f.side || m.Seq <= f.reads[side] {
			continue
		}
		f.reads[side] = m.Seq
		f.sink(0, ReadEvent{Who: side, Seq: m.Seq, ReadAt: m.ReadAt})
	}
	return nil
}

// followDialog authorizes p to follow the dialog: as a chat (keys) or as
// a reader (signed-in users, the platform).
func (r *Runtime) followDialog(ctx context.Context, p *platform.Principal, tenant, dialog, origin string) (*store.Dialog, error) {
	if p != nil && p.Kind == platform.KindKey {
		return r.turnDialog(ctx, p, tenant, dialog, origin)
	}
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActRead)
	if err != nil {
		return nil, err
	}
	d, err := r.store.Tenant(tenantID).Dialogs().Get(ctx, dialog)
	if err != nil {
		return nil, r.storeErr(ctx, "follow dialog", "dialog", err)
	}
	return d, nil
}

// follower is one stream's position in its dialog.
type follower struct {
	r                  *Runtime
	tenantID, dialogID string
	after              int64
	view               *endUserView
	sink               FollowSink
	// status and operator are what the stream last said of the dialog.
	status, operator string
	// side is the viewer's side (store.ReadByUser or ReadByOperator);
	// reads the read marks the stream last sent, by side.
	side  string
	reads map[string]int64
	// renewAt is when the stream renews its mark on the dialog (mark).
	renewAt time.Time
}

// catchUp sends what changed since the stream last looked: the status,
// then the messages after its position, in order, up to the first one
// still being written (its final form is sent once it is stored).
func (f *follower) catchUp(ctx context.Context) error {
	r := f.r
	// One statement reads the dialog with its handoff, so a release that
	// commits meanwhile never shows as a handoff that lost its operator.
	d, h, err := r.store.Tenant(f.tenantID).Handoffs().GetWithDialog(ctx, f.dialogID)
	if err != nil {
		return f.failed(ctx, err)
	}
	operator := ""
	if h != nil {
		operator = h.AssigneeName
	}
	for {
		rows, err := r.store.Tenant(f.tenantID).Messages().ListAfter(ctx, f.dialogID, f.after, maxFollowBatch)
		if err != nil {
			return f.failed(ctx, err)
		}
		for i := range rows {
			m := &rows[i]
			if m.Status == store.MessageStreaming {
				rows = nil
				break
			}
			if m.Status == store.MessageQueued {
				continue // it moves to the end when the loop takes it
			}
			f.after = m.Seq
			f.send(m)
		}
		if len(rows) < maxFollowBatch {
			break
		}
	}
	// The status goes after the messages: a closed dialog's stream ends
	// with it, its last messages sent.
	if d.Status != f.status || operator != f.operator {
		f.status, f.operator = d.Status, operator
		f.sink(0, HandoffEvent{Status: d.Status, Operator: operator})
	}
	return nil
}

// send passes one stored message on, as the stream's viewer sees it.
func (f *follower) send(m *store.Message) {
	if f.view != nil && !endUserKinds[m.Kind] {
		return
	}
	msg := f.view.message(messageView(m))
	if m.Kind == string(agent.KindOperator) {
		f.sink(m.Seq, OperatorMessageEvent{Message: msg})
		return
	}
	f.sink(m.Seq, MessageEvent{Message: msg})
}

// endUserKinds are the messages a widget's stream carries.
var endUserKinds = map[string]bool{string(agent.KindUser): true, string(agent.KindAssistant): true, string(agent.KindOperator): true}

func (f *follower) failed(ctx context.Context, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return platform.NotFound("dialog") // erased while followed
	}
	return f.r.internal(ctx, "follow dialog", err)
}
