package dialog

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/webhook"
)

// DialogEvent opens every stream with the dialog's id. It and
// MessageEvent reach clients as their apiclient wire types (pkg/api).
type DialogEvent struct {
	DialogID string
}

// MessageEvent carries a message as soon as it is stored.
type MessageEvent struct {
	Message Message
}

// Type is the event's "type" field.
func (DialogEvent) Type() string { return "dialog" }

// Type is the event's "type" field.
func (MessageEvent) Type() string { return "message" }

// onEvent is the loop's sink: it stores a streaming reply as its text
// arrives, keeps the final events for the JSON answer, and forwards all.
func (run *dialogRun) onEvent(e agent.Event) {
	switch ev := e.(type) {
	case agent.TextDelta:
		if run.firstTextAt.IsZero() {
			run.firstTextAt = run.r.now()
		}
		if err := run.rec.textStreamed(context.WithoutCancel(run.ctx), ev.Text); err != nil {
			run.r.log.Error("dialog: stream reply", "dialog", run.dialog.ID, "err", err)
		}
		run.rec.emit(e)
		for _, c := range run.streamed(ev.Text) {
			run.rec.emit(CitationEvent{Citation: c})
		}
		return
	case agent.Done:
		if ev.StopReason == agent.StopCanceled && ev.Text == "" {
			ev.Text = string(run.rec.text) // what the caller saw before the stop
			e = ev
		}
		run.turn.Done = &ev
		run.r.metrics.runs.WithLabelValues(string(ev.StopReason)).Inc()
		run.rec.loopDone(e)
		return
	case agent.Error:
		if run.r.base.Err() != nil {
			ev = restartingEvent()
			e = ev
		}
		run.turn.Error = &ev
	}
	run.rec.emit(e)
}

// onMessage persists each message the loop appends, as it appends it.
func (run *dialogRun) onMessage(ctx context.Context, m agent.Message) error {
	row, err := run.persist(ctx, m)
	if err != nil {
		return err
	}
	run.rec.saw(row)
	if err := run.persistToolCalls(ctx, row, m); err != nil {
		return err
	}
	if m.Kind == agent.KindToolResult {
		run.r.metrics.toolCall(m)
	}
	run.countMessage(m)
	view := messageView(row)
	run.turn.Messages = append(run.turn.Messages, run.view.message(view))
	if err := run.rec.announced(row, MessageEvent{Message: view}); err != nil {
		return err
	}
	return run.noteFlag(ctx, m)
}

// persist stores the loop's message m: a user's text it takes from the
// queue is that text's stored row, the reply is the reply's row (record),
// anything else a new row.
func (run *dialogRun) persist(ctx context.Context, m agent.Message) (*store.Message, error) {
	if err := run.rec.nextMessage(ctx); err != nil {
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
			if err := run.rec.rowComing(ctx); err != nil {
				return nil, err
			}
			return run.r.store.Tenant(run.dialog.TenantID).Messages().Dequeue(ctx, run.dialog.ID, q.id)
		}
	}
	row, err := storeMessage(run.dialog, m, run.cited(m)...)
	if err != nil {
		return nil, err
	}
	if err := run.markKnowledgeMiss(row, m); err != nil {
		return nil, err
	}
	if m.Kind == agent.KindAssistant {
		// Tool calls are rows that refer to the reply, so a reply with
		// calls is written at once.
		return row, run.rec.completed(ctx, row, len(m.ToolUses()) > 0)
	}
	if err := run.rec.rowComing(ctx); err != nil {
		return nil, err
	}
	return row, run.r.writeMessage(ctx, run.hookMessages, run.dialog, row, func(st *store.Store) error { return st.Tenant(row.TenantID).Messages().Append(ctx, row) })
}

// persistToolCalls records the calls of an assistant message and the
// results of tool_result messages.
func (run *dialogRun) persistToolCalls(ctx context.Context, row *store.Message, m agent.Message) error {
	return storeToolCalls(ctx, run.r.store, row, m, func(ctx context.Context, c *store.ToolCall, name string, info *agent.ToolInfo) error {
		return run.r.putToolResult(ctx, run.dialog, c, name, info)
	})
}

// storeToolCalls records the calls of an assistant message row and, with
// putResult, the result of a tool_result message.
func storeToolCalls(ctx context.Context, st *store.Store, row *store.Message, m agent.Message,
	putResult func(ctx context.Context, c *store.ToolCall, name string, info *agent.ToolInfo) error) error {
	for _, use := range m.ToolUses() {
		args := string(use.Arguments)
		if !json.Valid(use.Arguments) {
			args, _ = marshalString(map[string]string{"_raw": string(use.Arguments)})
		}
		c := &store.ToolCall{TenantID: row.TenantID, DialogID: row.DialogID, CallID: use.ID, MessageID: row.ID,
			Name: use.Name, Arguments: args, Status: store.ToolCallPending}
		if err := st.Tenant(c.TenantID).Messages().PutToolCall(ctx, c); err != nil {
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
		if err := putResult(ctx, c, res.Name, m.Tool); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return nil
}

// putToolResult stores the result of a tool call of dialog d; a failed
// one writes tool.failed in the same commit when the tenant has an
// endpoint for it.
func (r *Runtime) putToolResult(ctx context.Context, d *store.Dialog, c *store.ToolCall, name string, info *agent.ToolInfo) error {
	if !c.IsError || c.Status == store.ToolCallSkipped {
		return r.store.Tenant(c.TenantID).Messages().PutToolCall(ctx, c)
	}
	ev := platform.Event{TenantID: c.TenantID, BotID: d.BotID, DialogID: c.DialogID, Type: webhook.ToolFailed}
	return r.svc.Webhooks().WithEvent(ctx, ev, func(st *store.Store) (any, error) {
		if err := st.Tenant(c.TenantID).Messages().PutToolCall(ctx, c); err != nil {
			return nil, err
		}
		data := toolFailedData{DialogID: c.DialogID, BotID: d.BotID, CallID: c.CallID, Tool: name,
			Error: excerpt(c.Result, toolErrorExcerpt), DurationMS: c.DurationMS}
		if info != nil {
			data.Status, data.Kind = info.Status, info.Kind
		}
		return data, nil
	})
}

func marshalString(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func (run *dialogRun) onError(ctx context.Context, err error) {
	ctx = withGuard(ctx, run.guard) // the error may quote what was said
	run.r.log.WarnContext(ctx, "dialog: dialog run error", "dialog", run.dialog.ID, "err", err)
}
