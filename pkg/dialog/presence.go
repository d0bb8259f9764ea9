package dialog

import (
	"context"
	"sync"
	"time"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// Presence is who is typing in a dialog and how far each side has read
// it, the end user's and the operators': reach it with Runtime.Presence().
type Presence struct{ rt *Runtime }

// Presence returns typing signals and read marks of dialogs.
func (r *Runtime) Presence() Presence { return Presence{r} }

// This file carries what a handoff's two sides show of each other
// besides messages (docs/api.md, "Typing and read marks"): typing is a
// signal only, never stored, that the other side's live stream turns
// into a typing event; a read mark is stored (a reload shows it) and
// signalled the same way. Both travel like every dialog signal: to this
// process's streams at once, to the other processes through NOTIFY.

// The signals of this file (signals.go has the others).
const (
	signalTypingUser = "typing_user"
	signalRead       = "read"
)

// typingPause is the least time between two typing signals of one side
// of a dialog that this process passes on: clients send one about every
// three seconds while someone types, so a client sending more costs no
// more NOTIFY traffic than one that behaves.
const typingPause = 2 * time.Second

// ReadEvent says how far one side has read the dialog: Who is "user" or
// "operator", Seq the newest message it has seen.
type ReadEvent struct {
	Who    string
	Seq    int64
	ReadAt time.Time
}

// Type is the event's "type" field.
func (ReadEvent) Type() string { return "read" }

// side is which side of dialog p is on, authorised: an operator (a
// member or key who may operate the tenant's dialogs) or the end user (a
// key that may chat in the dialog: the widget's pk_ key with its end
// user's token, a chat key). Anyone else gets the operators' refusal.
func (pr Presence) side(ctx context.Context, p *platform.Principal, tenant, dialog, origin string) (*store.Dialog, string, error) {
	r := pr.rt
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActOperate)
	if err != nil {
		if p == nil || p.Kind != platform.KindKey {
			return nil, "", err
		}
		d, err := r.turnDialog(ctx, p, tenant, dialog, origin)
		return d, store.ReadByUser, err
	}
	d, err := r.store.Tenant(tenantID).Dialogs().Get(ctx, dialog)
	if err != nil {
		return nil, "", r.storeErr(ctx, "dialog presence", "dialog", err)
	}
	return d, store.ReadByOperator, nil
}

// Typing tells the other side of a handed-off dialog that the caller is
// writing (a typing event on its live stream); nothing is stored. An
// operator may only type in a dialog handed off to people; an end user's
// typing outside a handoff reaches nobody and is dropped.
func (pr Presence) Typing(ctx context.Context, p *platform.Principal, tenant, dialog, origin string) error {
	r := pr.rt
	d, side, err := pr.side(ctx, p, tenant, dialog, origin)
	if err != nil {
		return err
	}
	if side == store.ReadByOperator {
		if _, err := r.store.Tenant(d.TenantID).Handoffs().Get(ctx, d.ID); err != nil {
			return r.Handoffs().handoffErr(ctx, "operator typing", err)
		}
	} else if d.Status != DialogHandoff {
		return nil
	}
	if !r.typing.pass(liveKey(d.TenantID, d.ID)+" "+side, r.now()) {
		return nil
	}
	what := signalTypingOperator
	if side == store.ReadByUser {
		what = signalTypingUser
	}
	r.signal(ctx, d.TenantID, d.ID, what)
	return nil
}

// Read records that the caller's side has read the dialog up to the
// message seq and tells the other side's live stream. A mark never moves
// back; a seq past the dialog's newest message marks that one.
func (pr Presence) Read(ctx context.Context, p *platform.Principal, tenant, dialog, origin string, seq int64) (ReadEvent, error) {
	r := pr.rt
	if seq < 1 {
		return ReadEvent{}, platform.Invalid(platform.Detail{Pointer: "/seq", Message: "must be the seq of a message (1 or more)"})
	}
	d, side, err := pr.side(ctx, p, tenant, dialog, origin)
	if err != nil {
		return ReadEvent{}, err
	}
	moved, err := r.store.Tenant(d.TenantID).DialogReads().Mark(ctx, d.ID, side, seq, r.now())
	if err != nil {
		return ReadEvent{}, r.storeErr(ctx, "mark read", "dialog", err)
	}
	if moved {
		r.signal(ctx, d.TenantID, d.ID, signalRead)
	}
	marks, err := r.store.Tenant(d.TenantID).DialogReads().Of(ctx, d.ID)
	if err != nil {
		return ReadEvent{}, r.internal(ctx, "mark read", err)
	}
	m := marks[side]
	return ReadEvent{Who: side, Seq: m.Seq, ReadAt: m.ReadAt}, nil
}

// sideOf is the side of the tenant's dialogs p is on, once p may see the
// dialog: the end user's for a key that may not operate them (the
// widget's, a chat key), else the operators'.
func (pr Presence) sideOf(ctx context.Context, p *platform.Principal, tenant string) string {
	if p == nil || p.Kind != platform.KindKey {
		return store.ReadByOperator
	}
	if _, err := pr.rt.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActOperate); err != nil {
		return store.ReadByUser
	}
	return store.ReadByOperator
}

// typingGate passes at most one typing signal per dialog side and
// typingPause.
type typingGate struct {
	mu   sync.Mutex
	last map[string]time.Time
}

func newTypingGate() *typingGate { return &typingGate{last: map[string]time.Time{}} }

// pass says whether key's typing signal at now goes on. Entries older
// than the pause are dropped once the map grows, so it holds only the
// dialogs typed in lately.
func (g *typingGate) pass(key string, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if now.Sub(g.last[key]) < typingPause {
		return false
	}
	if len(g.last) >= 4096 {
		for k, at := range g.last {
			if now.Sub(at) >= typingPause {
				delete(g.last, k)
			}
		}
	}
	g.last[key] = now
	return true
}
