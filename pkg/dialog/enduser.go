package dialog

import (
	"encoding/json"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/platform"
)

// endUserView is what an end user may see of a dialog's tool calls. A
// widget caller (a pk_ key) is the end user: of a tool the bot's config
// does not show (tools[].show_to_end_user, mcp_servers[].show_to_end_user)
// it sees the call's name and whether it succeeded, never its arguments
// or result, which may hold what an endpoint knows about other customers,
// internal ids or a prompt's worth of data. Arguments become {} and
// results "", so every event and record keeps its shape. Admin, API (sk_)
// and preview callers see everything.
//
// Calls the end user must act on keep their arguments: a client tool's
// (the page runs it) and one waiting for confirmation (the visitor decides
// on what it will do), in client_tool_request, confirmation_request and a
// paused dialog's pending list.
type endUserView struct{ bot *botconfig.Bot }

// viewFor is the view of p on dialogs of bot; nil sees everything.
func viewFor(p *platform.Principal, bot *botconfig.Bot) *endUserView {
	if p == nil || p.KeyKind != auth.KindPublishable {
		return nil
	}
	return &endUserView{bot: bot}
}

func (v *endUserView) hides(tool string) bool {
	return v != nil && (v.bot == nil || !v.bot.ShowsToEndUser(tool))
}

// event is e as the viewer sees it; nil when the viewer sees nothing of
// it. The model's thinking is never shown to end users: it reasons about
// the prompt and about hidden tool results.
func (v *endUserView) event(e agent.Event) agent.Event {
	switch ev := e.(type) {
	case agent.ThinkingDelta:
		if v != nil {
			return nil
		}
	case agent.ToolCall:
		if v.hides(ev.Name) {
			ev.Arguments = nil
			return ev
		}
	case agent.ToolResult:
		if v.hides(ev.Name) {
			ev.Content = ""
			return ev
		}
	case MessageEvent:
		ev.Message = v.message(ev.Message)
		return ev
	case NestedEvent:
		// A sub-run works for the bot, as its tools do: end users see
		// that an agent ran (agent_start, agent_end), not what it did.
		if v != nil {
			return nil
		}
	case AgentEnd:
		if v != nil {
			ev.Text = ""
			return ev
		}
	}
	return e
}

// message is m as the viewer sees it: hidden calls' arguments and results
// taken out of its content (and of its text, for a tool result).
func (v *endUserView) message(m Message) Message {
	if v == nil || len(m.Content) == 0 {
		return m
	}
	var blocks []llm.Block
	if json.Unmarshal(m.Content, &blocks) != nil {
		return m
	}
	changed := false
	kept := blocks[:0:0]
	for _, b := range blocks {
		if b.Type == llm.BlockThinking {
			changed = true
			continue
		}
		kept = append(kept, b)
	}
	blocks = kept
	for i, b := range blocks {
		switch {
		case b.ToolUse != nil && v.hides(b.ToolUse.Name):
			use := *b.ToolUse
			use.Arguments = json.RawMessage(`{}`)
			blocks[i].ToolUse, changed = &use, true
		case b.ToolResult != nil && v.hides(b.ToolResult.Name):
			res := *b.ToolResult
			res.Content = ""
			blocks[i].ToolResult, changed = &res, true
			m.Text = ""
		}
	}
	if changed {
		m.Content, _ = json.Marshal(blocks)
	}
	return m
}

// toolCall is c as the viewer sees it.
func (v *endUserView) toolCall(c ToolCall) ToolCall {
	if v.hides(c.Name) {
		c.Arguments, c.Result = json.RawMessage(`{}`), ""
	}
	return c
}

// sink passes what the viewer may see on to next.
func (v *endUserView) sink(next agent.Sink) agent.Sink {
	if v == nil || next == nil {
		return next
	}
	return viewSink{v: v, next: next}
}

// viewSink is a sink seen through an endUserView. It is a BatchSink, so
// a stream still writes a stored reply's events at once.
type viewSink struct {
	v    *endUserView
	next agent.Sink
}

func (s viewSink) Send(e agent.Event) {
	if e = s.v.event(e); e != nil {
		s.next.Send(e)
	}
}

func (s viewSink) SendAll(events []agent.Event) {
	seen := make([]agent.Event, 0, len(events))
	for _, e := range events {
		if e = s.v.event(e); e != nil {
			seen = append(seen, e)
		}
	}
	if b, ok := s.next.(BatchSink); ok {
		b.SendAll(seen)
		return
	}
	for _, e := range seen {
		s.next.Send(e)
	}
}
