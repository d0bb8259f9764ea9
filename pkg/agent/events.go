package agent

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/parleyhq/parley/pkg/llm"
)

// Event is something that happened in a run. Every event marshals to a JSON
// object with a "type" field and the fields docs/events.md lists; the same
// JSON goes to SSE clients and `parley chat --json`.
type Event interface {
	// Type is the event's "type" field.
	Type() string
}

// Sink receives a run's events in order, from the goroutine running the loop.
// It must not block for long: the loop waits for it.
type Sink interface {
	Send(Event)
}

// SinkFunc adapts a function to a Sink.
type SinkFunc func(Event)

// Send calls f(e).
func (f SinkFunc) Send(e Event) { f(e) }

// discard is the sink of a run nobody watches.
type discard struct{}

func (discard) Send(Event) {}

// TurnStart opens a turn: one model call and the tool calls it asks for.
type TurnStart struct {
	Turn     int    `json:"turn"`
	Model    string `json:"model"`
	Provider string `json:"provider"`
}

// TextDelta is a streamed piece of the assistant's text.
type TextDelta struct {
	Text string `json:"text"`
}

// ThinkingDelta is a streamed piece of the model's extended thinking, on
// providers and configs that have it on.
type ThinkingDelta struct {
	Text string `json:"text"`
}

// ToolCall announces a tool call the model made.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolResult is the outcome of a tool call.
type ToolResult struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	IsError    bool   `json:"is_error"`
	Content    string `json:"content"`
	DurationMS int64  `json:"duration_ms"`
}

// CallRequest is one call handed to the caller.
type CallRequest struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ClientToolRequest pauses the run until the caller runs these calls and
// submits their results.
type ClientToolRequest struct {
	Calls []CallRequest `json:"calls"`
}

// ConfirmationRequest pauses the run until a human approves or declines the
// call.
type ConfirmationRequest struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Steering says new user input arrived between tool calls and these calls
// were skipped.
type Steering struct {
	Skipped []string `json:"skipped"`
}

// ProviderSwitch says this turn uses a different provider or model than the
// previous one. From and To are "provider/model".
type ProviderSwitch struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// TurnEnd closes a turn. StopReason is empty while the run goes on and names
// the run's stop reason on the turn that ends it.
type TurnEnd struct {
	Turn       int        `json:"turn"`
	StopReason StopReason `json:"stop_reason"`
	Usage      llm.Usage  `json:"usage"`
}

// Done ends every run, whatever its stop reason.
type Done struct {
	Text       string     `json:"text"`
	Turns      int        `json:"turns"`
	Usage      llm.Usage  `json:"usage"`
	StopReason StopReason `json:"stop_reason"`
}

// Error reports why a run stopped with stop reason "error". Message is safe
// to show to the end user.
type Error struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
}

// Type implementations: the one place event names are spelled.

func (TurnStart) Type() string           { return "turn_start" }
func (TextDelta) Type() string           { return "text_delta" }
func (ThinkingDelta) Type() string       { return "thinking_delta" }
func (ToolCall) Type() string            { return "tool_call" }
func (ToolResult) Type() string          { return "tool_result" }
func (ClientToolRequest) Type() string   { return "client_tool_request" }
func (ConfirmationRequest) Type() string { return "confirmation_request" }
func (Steering) Type() string            { return "steering" }
func (ProviderSwitch) Type() string      { return "provider_switch" }
func (TurnEnd) Type() string             { return "turn_end" }
func (Done) Type() string                { return "done" }
func (Error) Type() string               { return "error" }

// withType marshals v, an event's fields, with the "type" field first.
func withType(typ string, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(body)+len(typ)+12)
	out = append(out, `{"type":`...)
	out = strconv.AppendQuote(out, typ)
	if len(body) > 2 {
		out = append(out, ',')
	}
	return append(out, body[1:]...), nil
}

// The MarshalJSON methods convert to a method-less copy of the type so
// json.Marshal does not recurse.

func (e TurnStart) MarshalJSON() ([]byte, error) {
	type plain TurnStart
	return withType(e.Type(), plain(e))
}

func (e TextDelta) MarshalJSON() ([]byte, error) {
	type plain TextDelta
	return withType(e.Type(), plain(e))
}

func (e ThinkingDelta) MarshalJSON() ([]byte, error) {
	type plain ThinkingDelta
	return withType(e.Type(), plain(e))
}

func (e ToolCall) MarshalJSON() ([]byte, error) {
	type plain ToolCall
	e.Arguments = objectArgs(e.Arguments)
	return withType(e.Type(), plain(e))
}

func (e ToolResult) MarshalJSON() ([]byte, error) {
	type plain ToolResult
	return withType(e.Type(), plain(e))
}

func (e ClientToolRequest) MarshalJSON() ([]byte, error) {
	type plain ClientToolRequest
	calls := make([]CallRequest, len(e.Calls))
	for i, c := range e.Calls {
		c.Arguments = objectArgs(c.Arguments)
		calls[i] = c
	}
	e.Calls = calls
	return withType(e.Type(), plain(e))
}

func (e ConfirmationRequest) MarshalJSON() ([]byte, error) {
	type plain ConfirmationRequest
	e.Arguments = objectArgs(e.Arguments)
	return withType(e.Type(), plain(e))
}

func (e Steering) MarshalJSON() ([]byte, error) {
	type plain Steering
	if e.Skipped == nil {
		e.Skipped = []string{}
	}
	return withType(e.Type(), plain(e))
}

func (e ProviderSwitch) MarshalJSON() ([]byte, error) {
	type plain ProviderSwitch
	return withType(e.Type(), plain(e))
}

func (e TurnEnd) MarshalJSON() ([]byte, error) {
	type plain TurnEnd
	return withType(e.Type(), plain(e))
}

func (e Done) MarshalJSON() ([]byte, error) {
	type plain Done
	return withType(e.Type(), plain(e))
}

func (e Error) MarshalJSON() ([]byte, error) {
	type plain Error
	return withType(e.Type(), plain(e))
}

// objectArgs makes a call's arguments the JSON object the event table
// promises: empty becomes {}, and text that is not an object (a model's
// malformed JSON) is kept, quoted, under "_raw".
func objectArgs(raw json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return json.RawMessage(`{}`)
	}
	if trimmed[0] == '{' && json.Valid(trimmed) {
		return trimmed
	}
	quoted, _ := json.Marshal(map[string]string{"_raw": string(raw)})
	return quoted
}
