package api

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/openai/wire"
	"github.com/parleyhq/parley/pkg/tool"
)

// This file holds the OpenAI Chat Completions envelopes the OpenAI face
// speaks (OpenAI's own shapes, not Parley's; the messages, tools and
// errors inside them are package wire's) and their translation to the
// dialog runtime's inputs.

// chatRequest is a POST /v1/chat/completions body. Fields Parley does
// not use (temperature, max_tokens, response_format, ...) are ignored:
// the bot's config decides them.
type chatRequest struct {
	Model         string              `json:"model"`
	Messages      []wire.Message      `json:"messages"`
	Stream        bool                `json:"stream"`
	StreamOptions *wire.StreamOptions `json:"stream_options"`
	// User names the end user; a new dialog records it as its user_id.
	User       string          `json:"user"`
	Tools      []wire.Tool     `json:"tools"`
	ToolChoice json.RawMessage `json:"tool_choice"`
	N          *int            `json:"n"`
}

// chatCompletion is a non-streaming answer.
type chatCompletion struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint string       `json:"system_fingerprint,omitempty"`
	Choices           []chatChoice `json:"choices"`
	Usage             *wire.Usage  `json:"usage,omitempty"`
}

type chatChoice struct {
	Index int `json:"index"`
	// Message answers a request; Delta is a stream chunk's piece of it.
	Message      *chatReply `json:"message,omitempty"`
	Delta        *chatReply `json:"delta,omitempty"`
	FinishReason *string    `json:"finish_reason"`
	Logprobs     *struct{}  `json:"logprobs"`
}

// chatReply is a response message or a chunk's delta.
type chatReply struct {
	Role      string          `json:"role,omitempty"`
	Content   *string         `json:"content,omitempty"`
	ToolCalls []wire.ToolCall `json:"tool_calls,omitempty"`
	Refusal   *string         `json:"refusal,omitempty"`
	// Annotations cite the bot's knowledge (url_citation).
	Annotations []annotation `json:"annotations,omitempty"`
}

// modelList is GET /v1/models.
type modelList struct {
	Object string        `json:"object"`
	Data   []modelObject `json:"data"`
}

type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// conversation is what a request asks of the dialog runtime: a text to
// send, or client tool results to submit, after a history (used only when
// the request starts a dialog of its own).
type conversation struct {
	history []agent.Message
	text    string
	results []agent.ClientResult
	// at names the request message each history entry came from
	// (messages[3]), and textAt and resultsAt those of the new input, so
	// the runtime's complaints about them name the request's fields.
	at        []string
	textAt    string
	resultsAt []string
}

// params rewrites the pointers of the runtime's validation errors about
// the new input (/text, /results/0/id, /user_id) into the request's
// params (messages[4].content, messages[5].tool_call_id, user).
func (conv conversation) params(err error) error {
	e, ok := fromPlatform(err)
	if !ok || len(e.Details) == 0 {
		return err
	}
	out := *e
	out.Details = make([]apiclient.Detail, len(e.Details))
	for i, d := range e.Details {
		out.Details[i] = d
		parts := strings.Split(strings.TrimPrefix(d.Pointer, "/"), "/")
		switch {
		case d.Pointer == "/text" && conv.textAt != "":
			out.Details[i].Pointer = paramPointer(conv.textAt + ".content")
		case d.Pointer == "/user_id":
			out.Details[i].Pointer = "/user"
		case parts[0] == "results" && len(parts) == 3:
			n, err := strconv.Atoi(parts[1])
			if err != nil || n < 0 || n >= len(conv.resultsAt) {
				continue
			}
			field := map[string]string{"id": ".tool_call_id", "content": ".content"}[parts[2]]
			out.Details[i].Pointer = paramPointer(conv.resultsAt[n] + field)
		}
	}
	return &out
}

// errParam is a 400 about one request field, named as OpenAI names
// params (messages[2].content); the API's error JSON carries it as a
// pointer.
func errParam(param, format string, args ...any) *apiclient.Error {
	return badRequest(paramPointer(param), fmt.Sprintf(format, args...))
}

// paramPointer turns messages[2].content into /messages/2/content.
func paramPointer(param string) string {
	r := strings.NewReplacer("[", "/", "]", "", ".", "/")
	return "/" + r.Replace(param)
}

// pointerParam turns /messages/2/content back into messages[2].content.
func pointerParam(pointer string) string {
	var b strings.Builder
	for i, part := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		switch {
		case part != "" && strings.Trim(part, "0123456789") == "":
			b.WriteString("[" + part + "]")
		case i > 0:
			b.WriteString("." + part)
		default:
			b.WriteString(part)
		}
	}
	return b.String()
}

// check refuses what the face cannot honour, before anything is stored.
func (r *chatRequest) check() error {
	switch {
	case strings.TrimSpace(r.Model) == "":
		return errParam("model", "is required: name the bot (its slug) to talk to")
	case r.N != nil && *r.N != 1:
		return errParam("n", "must be 1: a bot gives one reply")
	case len(r.Messages) == 0:
		return errParam("messages", "must hold at least one message")
	}
	if len(r.ToolChoice) > 0 && !slices.Contains([]string{`"auto"`, `"none"`, "null"}, string(bytes.TrimSpace(r.ToolChoice))) {
		return errParam("tool_choice", `must be "auto" or "none": the bot decides which tools it calls`)
	}
	return nil
}

// clientTools are the request's tools, checked, as the client tools of
// the dialog's run. They may not take the names of the bot's own tools.
// tool_choice "none" offers none of them.
func (r *chatRequest) clientTools(bot dialog.ChatBot) ([]tool.Definition, error) {
	if string(bytes.TrimSpace(r.ToolChoice)) == `"none"` {
		return nil, nil
	}
	var out []tool.Definition
	seen := map[string]bool{}
	for i, t := range r.Tools {
		at := fmt.Sprintf("tools[%d]", i)
		name := t.Function.Name
		switch {
		case t.Type != "function":
			return nil, errParam(at+".type", `must be "function"`)
		case !llm.ValidToolName(name):
			return nil, errParam(at+".function.name", "must be 1 to 64 letters, digits, '_' or '-'")
		case seen[name]:
			return nil, errParam(at+".function.name", "names a tool already given")
		case slices.Contains(bot.ToolNames, name) || slices.ContainsFunc(bot.MCPServers, func(s string) bool { return strings.HasPrefix(name, s+"__") }):
			return nil, errParam(at+".function.name", "is the name of one of the bot's own tools; rename yours")
		}
		if err := tool.CheckParameters(t.Function.Parameters); err != nil {
			return nil, errParam(at+".function.parameters", "is not a usable JSON Schema: %v", err)
		}
		seen[name] = true
		out = append(out, tool.Definition{Name: name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return out, nil
}

// fullConversation reads the whole request as the conversation of a new
// dialog: system and developer messages are left out (the bot's prompt is
// the system prompt); the request ends with a user message, sent, or with
// tool messages answering the calls of the assistant message before them,
// submitted. Every earlier tool call must be answered before the next
// message, as the model APIs require.
func fullConversation(msgs []wire.Message) (conversation, error) {
	var conv conversation
	var open map[string]string // id -> name of calls awaiting their results
	last := -1
	for i, m := range msgs {
		at := fmt.Sprintf("messages[%d]", i)
		if m.Role == "tool" {
			if open == nil {
				return conv, errParam(at+".role", "a tool message must follow an assistant message with tool_calls")
			}
			name, ok := open[m.ToolCallID]
			if !ok {
				return conv, errParam(at+".tool_call_id", "answers no tool call of the assistant message before it")
			}
			delete(open, m.ToolCallID)
			text, err := contentText(m.Content, at)
			if err != nil {
				return conv, err
			}
			conv.history = append(conv.history, agent.Message{Kind: agent.KindToolResult,
				Message: llm.ToolResultMessage(llm.ToolResult{ToolUseID: m.ToolCallID, Name: name, Content: text})})
			conv.at = append(conv.at, at)
			last = i
			continue
		}
		if len(open) > 0 {
			return conv, errParam(at, "comes before every tool call of the assistant message before it was answered with a tool message")
		}
		open = nil
		switch m.Role {
		case "system", "developer":
			continue
		case "user":
			text, err := contentText(m.Content, at)
			if err != nil {
				return conv, err
			}
			if strings.TrimSpace(text) == "" {
				return conv, errParam(at+".content", "is empty")
			}
			conv.history = append(conv.history, agent.Message{Kind: agent.KindUser, Message: llm.UserText(text)})
			conv.at = append(conv.at, at)
		case "assistant":
			am, calls, err := assistantMessage(m, at)
			if err != nil {
				return conv, err
			}
			conv.history = append(conv.history, am)
			conv.at = append(conv.at, at)
			open = calls
		default:
			return conv, errParam(at+".role", `must be "system", "developer", "user", "assistant" or "tool"`)
		}
		last = i
	}
	if last < 0 {
		return conv, errParam("messages", "must hold a user message")
	}
	return conv.split(msgs[last].Role, len(open) > 0)
}

// split takes the request's new input off the end of the history: the
// last user text, or the tool results after the last assistant message.
func (conv conversation) split(lastRole string, unanswered bool) (conversation, error) {
	h := conv.history
	switch {
	case lastRole == "user":
		conv.text, conv.textAt = h[len(h)-1].Text(), conv.at[len(h)-1]
		conv.history = h[:len(h)-1]
	case lastRole == "tool" && !unanswered:
		n := len(h)
		for n > 0 && h[n-1].Kind == agent.KindToolResult {
			n--
		}
		for i, m := range h[n:] {
			r := m.ToolResult()
			conv.results = append(conv.results, agent.ClientResult{ID: r.ToolUseID, Content: r.Content})
			conv.resultsAt = append(conv.resultsAt, conv.at[n+i])
		}
		conv.history = h[:n]
	case lastRole == "tool":
		return conv, errParam("messages", "answer every tool call of the last assistant message with a tool message")
	default:
		return conv, errParam("messages", "must end with a user message or with tool messages")
	}
	return conv, nil
}

// newInput reads only what a request adds to a stored dialog: the tool
// messages it ends with (the results of the calls the dialog waits for)
// or its last user message. Earlier messages are the dialog's own history
// and are not read again.
func newInput(msgs []wire.Message) (conversation, error) {
	var conv conversation
	n := len(msgs)
	for n > 0 && msgs[n-1].Role == "tool" {
		n--
	}
	for i, m := range msgs[n:] {
		at := fmt.Sprintf("messages[%d]", n+i)
		if m.ToolCallID == "" {
			return conv, errParam(at+".tool_call_id", "is required")
		}
		text, err := contentText(m.Content, at)
		if err != nil {
			return conv, err
		}
		conv.results = append(conv.results, agent.ClientResult{ID: m.ToolCallID, Content: text})
		conv.resultsAt = append(conv.resultsAt, at)
	}
	if len(conv.results) > 0 {
		return conv, nil
	}
	at := fmt.Sprintf("messages[%d]", len(msgs)-1)
	if msgs[len(msgs)-1].Role != "user" {
		return conv, errParam(at+".role", "must be user or tool: the last message is what the dialog is sent")
	}
	text, err := contentText(msgs[len(msgs)-1].Content, at)
	if err != nil {
		return conv, err
	}
	conv.text, conv.textAt = text, at
	return conv, nil
}

// assistantMessage is an earlier assistant message of the request, with
// the calls it leaves open.
func assistantMessage(m wire.Message, at string) (agent.Message, map[string]string, error) {
	out := agent.Message{Kind: agent.KindAssistant, Message: llm.Message{Role: llm.RoleAssistant}}
	if !isNull(m.Content) {
		text, err := contentText(m.Content, at)
		if err != nil {
			return out, nil, err
		}
		if text != "" {
			out.Content = append(out.Content, llm.Block{Type: llm.BlockText, Text: text})
		}
	}
	var calls map[string]string
	for j, c := range m.ToolCalls {
		cat := fmt.Sprintf("%s.tool_calls[%d]", at, j)
		args := json.RawMessage(cmp.Or(c.Function.Arguments, "{}"))
		switch {
		case c.ID == "":
			return out, nil, errParam(cat+".id", "is required")
		case !llm.ValidToolName(c.Function.Name):
			return out, nil, errParam(cat+".function.name", "must be 1 to 64 letters, digits, '_' or '-'")
		case !json.Valid(args):
			return out, nil, errParam(cat+".function.arguments", "must be a JSON object")
		}
		if calls == nil {
			calls = map[string]string{}
		}
		calls[c.ID] = c.Function.Name
		out.Content = append(out.Content, llm.Block{Type: llm.BlockToolUse,
			ToolUse: &llm.ToolUse{ID: c.ID, Name: c.Function.Name, Arguments: args}})
	}
	if len(out.Content) == 0 {
		return out, nil, errParam(at+".content", "is empty and the message calls no tool")
	}
	return out, calls, nil
}

// contentText reads a message's content: a string, or a list of parts of
// which only text parts are understood.
func contentText(raw json.RawMessage, at string) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errParam(at+".content", "must be a string or a list of content parts")
	}
	var b strings.Builder
	for j, p := range parts {
		if p.Type != "text" {
			return "", errParam(fmt.Sprintf("%s.content[%d].type", at, j), "must be text: a bot reads text only")
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}
