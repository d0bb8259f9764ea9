package dialog

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/store"
)

// runRecord is where a run's persistence stands: whether the run holds
// its dialog's lease, where the row of the reply the loop is producing
// is, the last message seq the run has seen, and the events that wait for
// a write. Its methods are the transitions, and the only way any of it
// changes. Each says what must hold before it and what holds after; one
// called when its precondition does not hold writes nothing, changes
// nothing and returns a *transitionError.
//
// The lease goes none → held → released (by the last save) → ended, or
// straight from none or held to ended; nothing but end is allowed once
// the lease is given up, and nothing at all once the record ended.
//
// While the lease is held the reply goes through these phases:
//
//	none      no row: the reply's first text stores a streaming row, or
//	          the complete reply is appended whole.
//	reserved  a streaming row stored with the lease (in the same statement)
//	          before any text came: free for a reply, deleted when another
//	          row must come first or the loop ends without a reply.
//	streaming the row has text, written to it at most once a
//	          streamFlushEvery so a crash keeps most of what the user saw;
//	          a loop that ends without completing it leaves it interrupted.
//	held      the reply is complete but not written: the run's save writes
//	          it in its own commit. Its message event and every event after
//	          it wait for that write, so a caller never sees a reply before
//	          it is stored. Any other write of the run writes it first.
//
// A record is used by its run's goroutine only; the renewal timer reads
// whether the lease is held (holdsLease), which is why that is atomic.
type runRecord struct {
	store *store.Store
	log   *slog.Logger
	now   func() time.Time
	owner string // the lease's
	// sink receives the events, as the caller may see them; the run sets
	// it once it knows what that is, before its first event.
	sink agent.Sink
	// dialog is the dialog as the lease found it.
	dialog *store.Dialog

	lease atomic.Int32 // a leasePhase
	reply replyPhase
	// row is the reply's row in every phase but none.
	row *store.Message
	// text is what streamed into row so far, and flushedAt when it was
	// last written.
	text      []byte
	flushedAt time.Time
	// update is the held reply's write; announce its message event, once
	// the loop announced it, and after the events sent since it was held.
	update   store.MessageUpdate
	announce agent.Event
	after    []agent.Event
	// done is the loop's done event, sent last with the save, so a caller
	// that acts on it finds the dialog as the run left it: a widget told
	// of a handoff follows the dialog and must read it handed off, not
	// still active.
	done agent.Event
	// lastSeq is the highest message seq the run has written or taken.
	lastSeq int64

	// announce, when set, writes the loop's complete messages with their
	// message.created webhook event: a reply is then written at once,
	// never held for the save. saveRun, when set, makes the save (one
	// that writes an event with it). Both are set by the run as it leases.
	writeAnnounced func(ctx context.Context, row *store.Message, write func(st *store.Store) error) error
	saveRun        func(ctx context.Context, sv store.Save) (int64, error)
}

type leasePhase int32

const (
	leaseNone leasePhase = iota
	leaseHeld
	leaseReleased
	leaseEnded
)

func (p leasePhase) String() string {
	return [...]string{"none", "held", "released", "ended"}[p]
}

type replyPhase uint8

const (
	replyNone replyPhase = iota
	replyReserved
	replyStreaming
	replyHeld
)

func (p replyPhase) String() string {
	return [...]string{"none", "reserved", "streaming", "held"}[p]
}

// transitionError is a transition called when its precondition does not
// hold: a bug in the runtime, never the caller's doing.
type transitionError struct {
	transition string
	lease      leasePhase
	reply      replyPhase
}

func (e *transitionError) Error() string {
	return fmt.Sprintf("dialog: run record refuses %s with the lease %s and the reply %s", e.transition, e.lease, e.reply)
}

// newRunRecord is the record of a run that has not taken its lease yet:
// lease none, reply none.
func newRunRecord(st *store.Store, log *slog.Logger, now func() time.Time, owner string) *runRecord {
	return &runRecord{store: st, log: log, now: now, owner: owner}
}

func (rec *runRecord) leasePhase() leasePhase { return leasePhase(rec.lease.Load()) }

// refuse returns the transitionError for transition unless the lease is
// in phase want and the reply in one of replies (any when none are given).
func (rec *runRecord) refuse(transition string, want leasePhase, replies ...replyPhase) error {
	lease := rec.leasePhase()
	if lease == want && (len(replies) == 0 || slices.Contains(replies, rec.reply)) {
		return nil
	}
	return &transitionError{transition: transition, lease: lease, reply: rec.reply}
}

// loopDone keeps the loop's done event for the save (or for end, when
// the run fails before it). It is no transition: events flow in every
// phase.
func (rec *runRecord) loopDone(e agent.Event) { rec.done = e }

// holdsLease says whether the lease is the run's to renew.
func (rec *runRecord) holdsLease() bool { return rec.leasePhase() == leaseHeld }

// leased records the lease the run took: d is the dialog as the lease
// found it, reply the reply's row stored with it (Seq 0 when it was not
// stored, as in a paused dialog).
//
// Pre: lease none, reply none. Post: lease held; reply reserved when the
// row was stored, else none; the run has seen d's last_seq. Writes
// nothing.
func (rec *runRecord) leased(d *store.Dialog, reply *store.Message) error {
	if err := rec.refuse("leased", leaseNone, replyNone); err != nil {
		return err
	}
	rec.lease.Store(int32(leaseHeld))
	rec.dialog, rec.lastSeq = d, d.LastSeq
	if reply != nil && reply.Seq != 0 {
		rec.reply, rec.row, rec.flushedAt = replyReserved, reply, time.Now()
	}
	return nil
}

// saw notes a message row the run wrote or took.
func (rec *runRecord) saw(m *store.Message) { rec.lastSeq = max(rec.lastSeq, m.Seq) }

// textStreamed adds text to the reply as it streams.
//
// Pre: lease held. Post: reply streaming with text added, or none when
// its row could not be stored (the reply is then stored whole once
// complete: only a crash in between leaves no trace of it). Writes: a
// held reply first, as a new reply follows it; a streaming row when the
// reply has none; the text so far once a streamFlushEvery. A failed write
// is logged, not returned: the reply still streams.
func (rec *runRecord) textStreamed(ctx context.Context, text string) error {
	if err := rec.refuse("textStreamed", leaseHeld); err != nil {
		return err
	}
	switch rec.reply {
	case replyHeld:
		if err := rec.writeHeld(ctx); err != nil {
			rec.log.Error("dialog: store reply", "dialog", rec.dialog.ID, "err", err)
		}
		fallthrough
	case replyNone:
		rec.storeStreaming(ctx)
	case replyReserved:
		rec.reply = replyStreaming
	}
	rec.text = append(rec.text, text...)
	if rec.reply == replyStreaming && time.Since(rec.flushedAt) >= streamFlushEvery {
		rec.flushedAt = time.Now()
		if err := rec.writeText(ctx, store.MessageStreaming); err != nil {
			rec.log.Warn("dialog: flush streaming reply", "dialog", rec.dialog.ID, "err", err)
		}
	}
	return nil
}

// storeStreaming appends a streaming row for the reply. Reply none →
// streaming, or none when the append fails (logged).
func (rec *runRecord) storeStreaming(ctx context.Context) {
	m := &store.Message{TenantID: rec.dialog.TenantID, DialogID: rec.dialog.ID, Kind: string(agent.KindAssistant),
		Role: string(llm.RoleAssistant), BotVersion: rec.dialog.VersionNumber, Status: store.MessageStreaming,
		CreatedAt: rec.now()}
	if err := rec.store.Tenant(m.TenantID).Messages().Append(ctx, m); err != nil {
		rec.log.Error("dialog: store streaming reply", "dialog", rec.dialog.ID, "err", err)
		return
	}
	rec.saw(m)
	rec.reply, rec.row, rec.flushedAt = replyStreaming, m, time.Now()
}

// streamFlushEvery is how often a streaming reply's text so far is
// written to its row: what a crash can lose, against a write per interval
// per open stream.
const streamFlushEvery = time.Second

// nextMessage makes way for the loop's next message: whatever the loop
// adds follows the reply it holds, so that is written first.
//
// Pre: lease held. Post: reply none, reserved or streaming. Writes: a
// held reply, whose events then go (its own only if stored); a failure
// is returned, and the message must not be stored.
func (rec *runRecord) nextMessage(ctx context.Context) error {
	if err := rec.refuse("nextMessage", leaseHeld); err != nil {
		return err
	}
	if rec.reply == replyHeld {
		return rec.writeHeld(ctx)
	}
	return nil
}

// rowComing makes way for a row the loop is about to write that the
// reply must follow (a tool result, a queued text it takes, a summary).
//
// Pre: lease held, reply not held (nextMessage). Post: reply none or
// streaming. Writes: a reserved row is deleted (a failure is logged:
// left streaming, the row reads as interrupted after the next lease). A
// streaming reply stays where it is.
func (rec *runRecord) rowComing(ctx context.Context) error {
	if err := rec.refuse("rowComing", leaseHeld, replyNone, replyReserved, replyStreaming); err != nil {
		return err
	}
	if rec.reply == replyReserved {
		rec.discard(ctx)
	}
	return nil
}

// completed stores the loop's complete reply, row (made by storeMessage);
// calls says it asks for tool calls, whose rows refer to it.
//
// Pre: lease held, reply not held (nextMessage). Post: reply held when
// row took the reserved or streaming row's place and has no calls
// (likely the run's last message: the save that follows writes it); none
// otherwise. Writes: row over the reserved or streaming row when it has
// calls, or appended whole when there was none. row gets its id and seq.
func (rec *runRecord) completed(ctx context.Context, row *store.Message, calls bool) error {
	if err := rec.refuse("completed", leaseHeld, replyNone, replyReserved, replyStreaming); err != nil {
		return err
	}
	rec.text = rec.text[:0]
	write := func(w func(st *store.Store) error) error {
		if rec.writeAnnounced != nil {
			return rec.writeAnnounced(ctx, row, w)
		}
		return w(rec.store)
	}
	if rec.reply == replyNone {
		return write(func(st *store.Store) error { return st.Tenant(row.TenantID).Messages().Append(ctx, row) })
	}
	row.ID, row.Seq = rec.row.ID, rec.row.Seq
	update := completeUpdate(row)
	if calls || rec.writeAnnounced != nil {
		rec.reply, rec.row = replyNone, nil
		return write(func(st *store.Store) error { return st.Tenant(row.TenantID).Messages().Update(ctx, row.ID, update) })
	}
	rec.reply, rec.row, rec.update = replyHeld, row, update
	return nil
}

// announced is the message event of row, the loop's message just stored:
// it goes now, or, when row is the held reply, once the save has written
// it.
//
// Pre: lease held. Post: unchanged but for the event. Writes nothing.
func (rec *runRecord) announced(row *store.Message, event agent.Event) error {
	if err := rec.refuse("announced", leaseHeld); err != nil {
		return err
	}
	if rec.reply == replyHeld && rec.row == row {
		rec.announce = event
		return nil
	}
	rec.emit(event)
	return nil
}

// emit sends an event to the sink, or keeps it behind a held reply until
// that is written. It is no transition: events flow in every phase.
func (rec *runRecord) emit(e agent.Event) {
	switch {
	case rec.reply == replyHeld:
		rec.after = append(rec.after, e)
	case rec.sink != nil:
		rec.sink.Send(e)
	}
}

// loopEnded records that the loop returned: a reply it did not complete
// (an error, a cancel midway) stays as far as it got.
//
// Pre: lease held. Post: reply none or held. Writes: a reserved row is
// deleted; a streaming one is written with status cut (interrupted, or
// canceled when a person stopped it) and the text that did arrive (a
// failure is logged).
func (rec *runRecord) loopEnded(ctx context.Context, cut string) error {
	if err := rec.refuse("loopEnded", leaseHeld); err != nil {
		return err
	}
	switch rec.reply {
	case replyReserved:
		rec.discard(ctx)
	case replyStreaming:
		if err := rec.writeText(ctx, cut); err != nil {
			rec.log.Error("dialog: close streaming reply", "dialog", rec.dialog.ID, "err", err)
		}
		rec.reply, rec.row = replyNone, nil
	}
	rec.text = rec.text[:0]
	return nil
}

// save stores the loop state and the dialog status in one commit with
// the held reply, and gives the lease up with them when release says the
// run ends. It returns the dialog's last_seq as of that commit, and the
// store's error (ErrConflict: the lease was lost).
//
// Pre: lease held, reply none or held (the loop ended). Post: reply none,
// the held reply's events sent (its message event only if it was stored);
// lease released when release and the save succeeded. Writes: the save.
func (rec *runRecord) save(ctx context.Context, status, state string, release bool) (int64, error) {
	if err := rec.refuse("save", leaseHeld, replyNone, replyHeld); err != nil {
		return 0, err
	}
	d := rec.dialog
	sv := store.Save{TenantID: d.TenantID, DialogID: d.ID, Status: status, State: state, Release: release, Owner: rec.owner}
	if rec.reply == replyHeld {
		sv.ReplyID, sv.Reply = rec.row.ID, rec.update
	}
	save := rec.store.Tenant(d.TenantID).Dialogs().SaveRun
	if rec.saveRun != nil {
		save = rec.saveRun
	}
	lastSeq, err := save(ctx, sv)
	done := rec.done
	rec.done = nil
	rec.sendHeld(err == nil, done)
	if err == nil && release {
		rec.lease.Store(int32(leaseReleased))
	}
	return lastSeq, err
}

// end closes the record as its run ends, however it ends.
//
// Pre: not ended. Post: lease ended, reply none; every later transition
// is refused. Writes: a reserved row is deleted (a run that failed
// before its loop ran); the lease is released unless the last save did
// or it was never taken (failures are logged).
func (rec *runRecord) end(ctx context.Context) error {
	lease := rec.leasePhase()
	if lease == leaseEnded {
		return &transitionError{transition: "end", lease: lease, reply: rec.reply}
	}
	if rec.reply == replyReserved {
		rec.discard(ctx)
	}
	if rec.done != nil { // the run failed before its save
		rec.emit(rec.done)
		rec.done = nil
	}
	rec.lease.Store(int32(leaseEnded))
	if lease == leaseHeld {
		if err := rec.store.Tenant(rec.dialog.TenantID).Leases().Release(ctx, rec.dialog.ID, rec.owner); err != nil {
			rec.log.Error("dialog: release dialog lease", "dialog", rec.dialog.ID, "err", err)
		}
	}
	return nil
}

// writeHeld writes the held reply on its own, before a write that must
// follow it, and lets its events go. Reply held → none.
func (rec *runRecord) writeHeld(ctx context.Context) error {
	err := rec.store.Tenant(rec.row.TenantID).Messages().Update(ctx, rec.row.ID, rec.update)
	rec.sendHeld(err == nil, nil)
	return err
}

// BatchSink is a sink that can take several events at once. The events
// a stored reply lets go are all due at that moment, so a stream can
// write and flush them together.
type BatchSink interface {
	agent.Sink
	SendAll(events []agent.Event)
}

// sendHeld ends the held phase once the held reply's write ended, letting
// its events go: its own only if stored, then last (when not nil), all
// at once. Reply held → none; otherwise only last goes.
func (rec *runRecord) sendHeld(stored bool, last agent.Event) {
	var events []agent.Event
	if rec.reply == replyHeld {
		events = rec.after
		if stored && rec.announce != nil {
			events = append([]agent.Event{rec.announce}, rec.after...)
		}
		rec.reply, rec.row, rec.update, rec.announce, rec.after = replyNone, nil, store.MessageUpdate{}, nil, nil
	}
	if last != nil {
		events = append(events, last)
	}
	if len(events) == 0 {
		return
	}
	switch sink := rec.sink.(type) {
	case nil:
	case BatchSink:
		sink.SendAll(events)
	default:
		for _, e := range events {
			sink.Send(e)
		}
	}
}

// discard deletes the reserved row. Reply reserved → none.
func (rec *runRecord) discard(ctx context.Context) {
	m := rec.row
	rec.reply, rec.row = replyNone, nil
	if err := rec.store.Tenant(m.TenantID).Messages().DiscardReply(ctx, m.ID); err != nil {
		// Left streaming, it reads as interrupted after the next lease.
		rec.log.Warn("dialog: discard reserved reply", "dialog", rec.dialog.ID, "err", err)
	}
}

// writeText writes the text so far to the streaming row with status.
func (rec *runRecord) writeText(ctx context.Context, status string) error {
	text := string(rec.text)
	content, err := json.Marshal(llm.AssistantText(text).Content)
	if err != nil {
		return err
	}
	return rec.store.Tenant(rec.row.TenantID).Messages().Update(ctx, rec.row.ID, store.MessageUpdate{
		Content: string(content), Text: text, Meta: emptyMeta, Status: status})
}

// completeUpdate writes row's content, complete, over the stored row with
// its id: a reply completing its streaming row, an orphaned text adopted.
func completeUpdate(row *store.Message) store.MessageUpdate {
	return store.MessageUpdate{Content: row.Content, Text: row.Text, Model: row.Model, Provider: row.Provider,
		Meta: row.Meta, Status: store.MessageComplete, Turn: row.Turn,
		InputTokens: row.InputTokens, OutputTokens: row.OutputTokens}
}
