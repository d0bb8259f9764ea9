package api

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/knowledge/cite"
	"github.com/parleyhq/parley/pkg/llm/openai/wire"
)

// completion is what every answer to one chat completion request shares.
type completion struct {
	id          string
	created     int64
	model       string
	fingerprint string
}

func completionFor(bot dialog.ChatBot, now time.Time) completion {
	return completion{id: "chatcmpl-" + newRequestID(), created: now.Unix(), model: bot.Slug, fingerprint: bot.Fingerprint}
}

// whole is the non-streaming answer to a turn.
func (r completion) whole(t dialog.Turn) chatCompletion {
	msg := &chatReply{Role: "assistant", ToolCalls: clientCalls(t.Pending)}
	if text := replyText(t); text != "" || len(msg.ToolCalls) == 0 {
		msg.Content = &text
		msg.Annotations = annotationsFor(text, turnCitations(t))
	}
	finish := finishReason(t.Done, t.Pending)
	out := r.envelope("chat.completion", chatChoice{Message: msg, FinishReason: &finish})
	out.Usage = usageOf(t.Done)
	return out
}

func (r completion) envelope(object string, choices ...chatChoice) chatCompletion {
	if choices == nil {
		choices = []chatChoice{}
	}
	return chatCompletion{ID: r.id, Object: object, Created: r.created, Model: r.model,
		SystemFingerprint: r.fingerprint, Choices: choices}
}

// replyText is the bot's reply: the text of every assistant message the
// turn stored, as the widget shows them, and the done event's text when it
// is not the last of them (a done tool's message, a termination summary).
func replyText(t dialog.Turn) string {
	var texts []string
	for _, m := range t.Messages {
		if m.Kind == string(agent.KindAssistant) && m.Text != "" {
			texts = append(texts, m.Text)
		}
	}
	if t.Done != nil && t.Done.Text != "" && (len(texts) == 0 || texts[len(texts)-1] != t.Done.Text) {
		texts = append(texts, t.Done.Text)
	}
	return strings.Join(texts, turnSeparator)
}

// turnSeparator parts the texts of a reply's turns.
const turnSeparator = "\n\n"

// clientCalls are the client tool calls a paused dialog hands over, as
// OpenAI tool_calls. Calls waiting for a confirmation are not the
// client's to run and are left out.
func clientCalls(pending []dialog.PendingCall) []wire.ToolCall {
	var out []wire.ToolCall
	for _, pc := range pending {
		if pc.Kind == agent.PendingClient {
			out = append(out, toolCallOf(pc.ID, pc.Name, pc.Arguments))
		}
	}
	return out
}

func toolCallOf(id, name string, args json.RawMessage) wire.ToolCall {
	return wire.ToolCall{ID: id, Type: "function", Function: wire.FunctionCall{Name: name, Arguments: string(args)}}
}

// finishReason maps how the run stopped: tool_calls when it waits for
// the client's tools, length when a limit cut it short, stop otherwise.
func finishReason(done *agent.Done, pending []dialog.PendingCall) string {
	if len(clientCalls(pending)) > 0 {
		return "tool_calls"
	}
	if done != nil {
		switch done.StopReason {
		case agent.StopMaxTurns, agent.StopTokenBudget, agent.StopQuota:
			return "length"
		}
	}
	return "stop"
}

func usageOf(done *agent.Done) *wire.Usage {
	if done == nil {
		return &wire.Usage{}
	}
	u := done.Usage
	return &wire.Usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}
}

// chunkSink turns a run's events into chat.completion.chunk frames on an
// event stream: a first chunk with the role once the run holds the dialog,
// the text as it streams (turns parted like replyText), the client tool
// calls it pauses on, a last chunk with the finish reason, the usage when
// asked, and data: [DONE]. The bot's own tool calls run on the server and
// are not shown.
type chunkSink struct {
	sse   *sseStream
	reply completion
	usage bool

	started  bool
	turnText strings.Builder // the text of the current turn so far
	lastText string          // the text of the last turn that had one
	sent     bool            // some text was sent
	all      strings.Builder // every text sent, as the client joins it
	cited    []cite.Citation // the citation events of the reply
	calls    []wire.ToolCall
	failed   bool
}

// Send implements agent.Sink.
func (s *chunkSink) Send(e agent.Event) {
	switch ev := e.(type) {
	case dialog.DialogEvent:
		s.begin()
	case agent.TurnStart:
		s.endTurn()
	case agent.TextDelta:
		s.text(ev.Text)
	case dialog.CitationEvent:
		s.cited = append(s.cited, ev.Citation)
	case agent.ClientToolRequest:
		for i, c := range ev.Calls {
			call := toolCallOf(c.ID, c.Name, c.Arguments)
			call.Index = &i
			s.calls = append(s.calls, call)
		}
		s.chunk(chatReply{ToolCalls: s.calls}, nil)
	case agent.Error:
		// The loop's description is caller-safe: a code and a fixed text.
		s.fail(wire.Error{Message: ev.Message, Type: "server_error", Code: &ev.Code})
	case agent.Done:
		s.done(ev)
	}
}

// began says whether the stream has started: from then on, the status is
// sent and failures travel as frames.
func (s *chunkSink) began() bool { return s.started }

func (s *chunkSink) begin() {
	if s.started {
		return
	}
	s.started = true
	empty := ""
	s.chunk(chatReply{Role: "assistant", Content: &empty}, nil)
}

func (s *chunkSink) endTurn() {
	if s.turnText.Len() > 0 {
		s.lastText = s.turnText.String()
		s.turnText.Reset()
	}
}

func (s *chunkSink) text(t string) {
	if t == "" {
		return
	}
	if s.turnText.Len() == 0 && s.sent {
		t = turnSeparator + t
		s.turnText.WriteString(t[len(turnSeparator):])
	} else {
		s.turnText.WriteString(t)
	}
	s.sent = true
	s.all.WriteString(t)
	s.chunk(chatReply{Content: &t}, nil)
}

func (s *chunkSink) done(d agent.Done) {
	if s.failed {
		return
	}
	s.endTurn()
	if d.Text != "" && d.Text != s.lastText {
		s.text(d.Text)
	}
	if notes := annotationsFor(s.all.String(), s.cited); len(notes) > 0 {
		s.chunk(chatReply{Annotations: notes}, nil)
	}
	finish := finishReason(&d, nil)
	if len(s.calls) > 0 {
		finish = "tool_calls"
	}
	frames := s.frame(s.reply.envelope("chat.completion.chunk", chatChoice{Delta: &chatReply{}, FinishReason: &finish}))
	if s.usage {
		u := s.reply.envelope("chat.completion.chunk")
		u.Usage = usageOf(&d)
		frames = append(frames, s.frame(u)...)
	}
	s.sse.write(append(frames, "data: [DONE]\n\n"...))
}

// fail ends the stream with OpenAI's error frame, which the SDKs raise as
// an API error.
func (s *chunkSink) fail(body wire.Error) {
	if s.failed {
		return
	}
	s.begin()
	s.failed = true
	b, _ := json.Marshal(wire.ErrorBody{Error: body})
	s.sse.write(dataFrame(b))
}

func (s *chunkSink) chunk(delta chatReply, finish *string) {
	s.sse.write(s.frame(s.reply.envelope("chat.completion.chunk", chatChoice{Delta: &delta, FinishReason: finish})))
}

func (s *chunkSink) frame(v chatCompletion) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{}`)
	}
	return dataFrame(b)
}

// dataFrame is one server-sent event of OpenAI's streams: a data line
// only, no event name.
func dataFrame(data []byte) []byte {
	b := make([]byte, 0, len(data)+8)
	b = append(b, "data: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}
