package dialog

import (
	"context"
	"sync"

	"github.com/parleyhq/parley/pkg/store"
)

// This file is how a dialog's live streams (Follow) learn that something
// happened in it, in this process or another: a signal wakes them, and
// they read what changed from the store. They are delivered here directly
// to this process's streams, and on PostgreSQL also through NOTIFY
// (store.Dialogs.Signal), which every other process hears.

// Signals a dialog's streams hear.
const (
	// signalChanged: new messages, or a new status or operator.
	signalChanged = store.SignalChanged
	// signalTyping...: someone is writing a message in the dialog.
	signalTypingBot      = "typing_bot"
	signalTypingOperator = "typing_operator"
)

// signalBuffer is how many signals a stream may lag behind before the
// oldest are dropped: a changed signal only says "read the store", so
// one pending is as good as many.
const signalBuffer = 4

// signals delivers dialog signals to this process's live streams.
type signals struct {
	mu   sync.Mutex
	subs map[string]map[chan string]struct{} // liveKey -> listeners
}

func newSignals() *signals { return &signals{subs: map[string]map[chan string]struct{}{}} }

// listen subscribes to the dialog's signals until stop is called.
func (s *signals) listen(tenantID, dialogID string) (ch <-chan string, stop func()) {
	c := make(chan string, signalBuffer)
	key := liveKey(tenantID, dialogID)
	s.mu.Lock()
	if s.subs[key] == nil {
		s.subs[key] = map[chan string]struct{}{}
	}
	s.subs[key][c] = struct{}{}
	s.mu.Unlock()
	return c, func() {
		s.mu.Lock()
		delete(s.subs[key], c)
		if len(s.subs[key]) == 0 {
			delete(s.subs, key)
		}
		s.mu.Unlock()
	}
}

// anyDialog, as a dialog id, listens to every dialog of a tenant (the
// operators' inbox).
const anyDialog = "*"

// deliver hands signal to the dialog's listeners in this process, and a
// changed signal to its tenant's listeners for any dialog too (the inbox
// wants nothing else, and a busy tenant's typing must not crowd it out).
// A listener that lags gets a changed or read signal instead of its
// oldest pending one; a typing signal it simply misses, as the next one
// comes in seconds.
func (s *signals) deliver(tenantID, dialogID, signal string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.send(s.subs[liveKey(tenantID, dialogID)], signal)
	if signal == signalChanged {
		s.send(s.subs[liveKey(tenantID, anyDialog)], signal)
	}
}

// send is deliver to one set of listeners. Call with mu held.
func (s *signals) send(subs map[chan string]struct{}, signal string) {
	ephemeral := signal == signalTypingOperator || signal == signalTypingUser || signal == signalTypingBot
	for c := range subs {
		for !offer(c, signal) && !ephemeral {
			select { // make room: drop the oldest
			case <-c:
			default:
			}
		}
	}
}

// offer sends signal on c if it has room.
func offer(c chan string, signal string) bool {
	select {
	case c <- signal:
		return true
	default:
		return false
	}
}

// signal tells the dialog's streams, in every process, that something
// happened. This process's streams hear it at once, whatever the state of
// the PostgreSQL listener (which may still be connecting, or be
// reconnecting); its NOTIFY reaches the others, and this process again,
// where a second wake reads nothing new. A failure costs only latency
// (streams re-read on their own now and then), so it is logged, not
// returned.
func (r *Runtime) signal(ctx context.Context, tenantID, dialogID, what string) {
	r.signals.deliver(tenantID, dialogID, what)
	if !r.store.Signals().AcrossProcesses() {
		return
	}
	if err := r.store.Tenant(tenantID).Dialogs().Signal(context.WithoutCancel(ctx), dialogID, what); err != nil {
		r.log.WarnContext(ctx, "dialog: signal live streams", "dialog", dialogID, "err", err)
	}
}
