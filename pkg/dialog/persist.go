package dialog

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/store"
)

// DialogEvent opens every stream with the dialog's id.
type DialogEvent struct {
	DialogID string `json:"dialog_id"`
}

// MessageEvent carries a message as soon as it is stored.
type MessageEvent struct {
	Message Message `json:"message"`
}

// Type is the event's "type" field.
func (DialogEvent) Type() string { return "dialog" }

// Type is the event's "type" field.
func (MessageEvent) Type() string { return "message" }

// MarshalJSON writes the event with its type, like the loop's events.
func (e DialogEvent) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type     string `json:"type"`
		DialogID string `json:"dialog_id"`
	}{e.Type(), e.DialogID})
}

// MarshalJSON writes the event with its type, like the loop's events.
func (e MessageEvent) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type    string  `json:"type"`
		Message Message `json:"message"`
	}{e.Type(), e.Message})
}

// emit sends an event to the caller's sink, or keeps it behind a held
// reply until that is written.
func (run *dialogRun) emit(e agent.Event) {
	switch {
	case run.held != nil:
		run.held.after = append(run.held.after, e)
	case run.sink != nil:
		run.sink.Send(e)
	}
}

// heldReply is a complete reply whose write waits for the run's next
// one, with the events it holds back.
type heldReply struct {
	row    *store.Message
	update store.MessageUpdate
	// event announces the reply; after are the events the loop sent
	// since.
	event agent.Event
	after []agent.Event
}

// writeHeld writes the held reply on its own, before a write that must
// follow it.
func (run *dialogRun) writeHeld(ctx context.Context) error {
	if run.held == nil {
		return nil
	}
	row := run.held.row
	err := run.r.store.UpdateMessage(ctx, row.TenantID, row.ID, run.held.update)
	run.sendHeld(err == nil)
	return err
}

// BatchSink is a sink that can take several events at once. The events
// a stored reply lets go are all due at that moment, so a stream can
// write and flush them together.
type BatchSink interface {
	agent.Sink
	SendAll(events []agent.Event)
}

// sendHeld lets the held reply's events go once its write ended: its
// own only if stored.
func (run *dialogRun) sendHeld(stored bool) {
	h := run.held
	if h == nil {
		return
	}
	run.held = nil
	events := h.after
	if stored && h.event != nil {
		events = append([]agent.Event{h.event}, h.after...)
	}
	switch sink := run.sink.(type) {
	case nil:
	case BatchSink:
		sink.SendAll(events)
	default:
		for _, e := range events {
			sink.Send(e)
		}
	}
}

// onEvent is the loop's sink: it stores a streaming reply at its first
// text, keeps the final events for the JSON answer, and forwards all.
func (run *dialogRun) onEvent(e agent.Event) {
	switch ev := e.(type) {
	case agent.TextDelta:
		run.startStreaming()
		run.partial = append(run.partial, ev.Text...)
		run.flushStreaming()
	case agent.Done:
		run.turn.Done = &ev
		run.r.metrics.runs.WithLabelValues(string(ev.StopReason)).Inc()
	case agent.Error:
		if run.r.base.Err() != nil {
			ev = restartingEvent()
			e = ev
		}
		run.turn.Error = &ev
	}
	run.emit(e)
}

func (run *dialogRun) startStreaming() {
	if run.streaming != nil {
		run.reserved = false
		return
	}
	if err := run.writeHeld(context.WithoutCancel(run.ctx)); err != nil {
		run.r.log.Error("dialog: store reply", "dialog", run.dialog.ID, "err", err)
	}
	m := &store.Message{TenantID: run.dialog.TenantID, DialogID: run.dialog.ID, Kind: string(agent.KindAssistant),
		Role: string(llm.RoleAssistant), BotVersion: run.dialog.VersionNumber, Status: store.MessageStreaming,
		CreatedAt: run.r.now()}
	if err := run.r.store.AppendMessage(context.WithoutCancel(run.ctx), m); err != nil {
		// The reply still streams and is stored whole at its end; only a
		// crash in between would now leave no trace of it.
		run.r.log.Error("dialog: store streaming reply", "dialog", run.dialog.ID, "err", err)
		return
	}
	run.streaming, run.flushedAt = m, time.Now()
	run.saw(m)
}

// streamFlushEvery is how often a streaming reply's text so far is
// written to its row: what a crash can lose, against a write per interval
// per open stream.
const streamFlushEvery = time.Second

// flushStreaming writes the text so far to the streaming row, at most once
// per streamFlushEvery, so a crash keeps most of what the user already saw.
func (run *dialogRun) flushStreaming() {
	if run.streaming == nil || time.Since(run.flushedAt) < streamFlushEvery {
		return
	}
	run.flushedAt = time.Now()
	if err := run.writeStreaming(store.MessageStreaming); err != nil {
		run.r.log.Warn("dialog: flush streaming reply", "dialog", run.dialog.ID, "err", err)
	}
}

// writeStreaming writes the text so far to the streaming row with status.
func (run *dialogRun) writeStreaming(status string) error {
	m, text := run.streaming, string(run.partial)
	content, _ := json.Marshal(llm.AssistantText(text).Content)
	return run.r.store.UpdateMessage(context.WithoutCancel(run.ctx), m.TenantID, m.ID, store.MessageUpdate{
		Content: string(content), Text: text, Meta: "{}", Status: status})
}

// closeStreaming ends a streaming row the loop never completed (an error
// or a cancel midway), keeping the text that did arrive.
func (run *dialogRun) closeStreaming(status string) {
	if run.streaming == nil || run.discardReserved(context.WithoutCancel(run.ctx)) {
		return
	}
	if err := run.writeStreaming(status); err != nil {
		run.r.log.Error("dialog: close streaming reply", "dialog", run.dialog.ID, "err", err)
	}
	run.streaming, run.partial = nil, run.partial[:0]
}

// discardReserved deletes the reply row stored with the lease while no
// reply has come into it, and says whether it did: before a row that
// must precede the reply is written, and when the loop ends without one.
func (run *dialogRun) discardReserved(ctx context.Context) bool {
	if !run.reserved {
		return false
	}
	m := run.streaming
	run.streaming, run.reserved = nil, false
	if err := run.r.store.DiscardReply(ctx, m.TenantID, m.ID); err != nil {
		// Left streaming, it reads as interrupted after the next lease.
		run.r.log.Warn("dialog: discard reserved reply", "dialog", run.dialog.ID, "err", err)
	}
	return true
}

// onMessage persists each message the loop appends, as it appends it.
func (run *dialogRun) onMessage(ctx context.Context, m agent.Message) error {
	row, err := run.persist(ctx, m)
	if err != nil {
		return err
	}
	run.saw(row)
	if err := run.persistToolCalls(ctx, row, m); err != nil {
		return err
	}
	if m.Kind == agent.KindToolResult {
		run.r.metrics.toolCall(m)
	}
	view := messageView(row)
	run.turn.Messages = append(run.turn.Messages, run.view.message(view))
	if run.held != nil && run.held.row == row {
		run.held.event = MessageEvent{Message: view} // sent once the save has stored it
		return nil
	}
	run.emit(MessageEvent{Message: view})
	return nil
}

func (run *dialogRun) persist(ctx context.Context, m agent.Message) (*store.Message, error) {
	st := run.r.store
	if err := run.writeHeld(ctx); err != nil {
		return nil, err
	}
	if m.Kind == agent.KindUser && m.Origin == "" {
		run.r.mu.Lock()
		q, ok := run.lr.take(m.Text())
		run.r.mu.Unlock()
		if ok && q.row != nil && len(run.turn.Messages) == 0 {
			return q.row, nil // stored complete, and nothing was written after it
		}
		if ok {
			run.discardReserved(ctx)
			return st.DequeueMessage(ctx, run.dialog.TenantID, run.dialog.ID, q.id)
		}
	}
	row, err := storeMessage(run.dialog, m)
	if err != nil {
		return nil, err
	}
	if m.Kind == agent.KindAssistant && run.streaming != nil {
		row.ID, row.Seq = run.streaming.ID, run.streaming.Seq
		run.streaming, run.partial, run.reserved = nil, run.partial[:0], false
		update := store.MessageUpdate{Content: row.Content, Text: row.Text,
			Model: row.Model, Provider: row.Provider, Meta: row.Meta, Status: store.MessageComplete, Turn: row.Turn,
			InputTokens: row.InputTokens, OutputTokens: row.OutputTokens}
		if len(m.ToolUses()) == 0 {
			// Likely the run's last message: the save that follows writes
			// it. Tool calls are rows that refer to it, so a reply with
			// calls is written now.
			run.held = &heldReply{row: row, update: update}
			return row, nil
		}
		return row, st.UpdateMessage(ctx, row.TenantID, row.ID, update)
	}
	run.discardReserved(ctx) // this row comes before the reply
	return row, st.AppendMessage(ctx, row)
}

// persistToolCalls records the calls of an assistant message and the
// results of tool_result messages.
func (run *dialogRun) persistToolCalls(ctx context.Context, row *store.Message, m agent.Message) error {
	st := run.r.store
	for _, use := range m.ToolUses() {
		args := string(use.Arguments)
		if !json.Valid(use.Arguments) {
			args, _ = marshalString(map[string]string{"_raw": string(use.Arguments)})
		}
		c := &store.ToolCall{TenantID: row.TenantID, DialogID: row.DialogID, CallID: use.ID, MessageID: row.ID,
			Name: use.Name, Arguments: args, Status: store.ToolCallPending}
		if err := st.PutToolCall(ctx, c); err != nil {
			return err
		}
	}
	if res := m.ToolResult(); res != nil && m.Kind == agent.KindToolResult {
		c := &store.ToolCall{TenantID: row.TenantID, DialogID: row.DialogID, CallID: res.ToolUseID,
			Result: res.Content, IsError: res.IsError, Status: store.ToolCallDone}
		if m.Tool != nil {
			c.DurationMS = m.Tool.DurationMS
			if m.Tool.Skipped {
				c.Status = store.ToolCallSkipped
			}
		}
		if err := st.PutToolCall(ctx, c); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return nil
}

func marshalString(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func (run *dialogRun) onError(ctx context.Context, err error) {
	run.r.log.WarnContext(ctx, "dialog: dialog run error", "dialog", run.dialog.ID, "err", err)
}
