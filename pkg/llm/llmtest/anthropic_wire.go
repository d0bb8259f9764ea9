package llmtest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// MessagesRequest is an Anthropic Messages API request body as the server
// parsed it, in the server's own types (see ChatRequest for why).
type MessagesRequest struct {
	Model       string              `json:"model"`
	MaxTokens   *int                `json:"max_tokens"`
	System      []MessagesBlock     `json:"-"`
	Messages    []MessagesMessage   `json:"messages"`
	Tools       []MessagesTool      `json:"tools,omitempty"`
	ToolChoice  *MessagesToolChoice `json:"tool_choice,omitempty"`
	Thinking    *MessagesThinking   `json:"thinking,omitempty"`
	Temperature *float64            `json:"temperature,omitempty"`
	Stream      bool                `json:"stream,omitempty"`
}

// MessagesMessage is one message; Content is a string or a list of blocks
// in the request and always a list here.
type MessagesMessage struct {
	Role    string          `json:"role"`
	Content []MessagesBlock `json:"-"`
	// empty is set when content was an empty string or list.
	empty bool
}

// MessagesBlock is one content block of any kind.
type MessagesBlock struct {
	Type         string           `json:"type"`
	Text         *string          `json:"text,omitempty"`
	ID           string           `json:"id,omitempty"`
	Name         string           `json:"name,omitempty"`
	Input        json.RawMessage  `json:"input,omitempty"`
	ToolUseID    string           `json:"tool_use_id,omitempty"`
	Content      json.RawMessage  `json:"content,omitempty"`
	IsError      *bool            `json:"is_error,omitempty"`
	Thinking     *string          `json:"thinking,omitempty"`
	Signature    *string          `json:"signature,omitempty"`
	Data         string           `json:"data,omitempty"`
	CacheControl *json.RawMessage `json:"cache_control,omitempty"`
	// Source is an image block's picture.
	Source *MessagesImageSource `json:"source,omitempty"`
}

// MessagesTool is a custom tool definition.
type MessagesTool struct {
	Type         string           `json:"type,omitempty"`
	Name         string           `json:"name"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"input_schema"`
	CacheControl *json.RawMessage `json:"cache_control,omitempty"`
	// Strict asks for strict tool use: the input_schema must then keep to
	// the JSON Schema subset strict tool use supports.
	Strict *bool `json:"strict,omitempty"`
	// extra are fields a custom tool does not have, which the API refuses.
	extra []string
}

// knownToolFields are the fields of a custom tool (the SDK's ToolParam).
var knownToolFields = map[string]bool{
	"type": true, "name": true, "description": true, "input_schema": true, "cache_control": true, "strict": true,
	"eager_input_streaming": true, "defer_loading": true, "allowed_callers": true, "input_examples": true,
}

// UnmarshalJSON decodes a tool, noting fields a custom tool does not have
// and a strict that is not a boolean.
func (t *MessagesTool) UnmarshalJSON(data []byte) error {
	type plain MessagesTool
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	if raw, ok := all["strict"]; ok && string(raw) != "true" && string(raw) != "false" {
		return fmt.Errorf("strict: Input should be a valid boolean")
	}
	if err := json.Unmarshal(data, (*plain)(t)); err != nil {
		return err
	}
	t.extra = nil
	for k := range all {
		if !knownToolFields[k] {
			t.extra = append(t.extra, k)
		}
	}
	return nil
}

// MessagesToolChoice is the request's tool_choice object.
type MessagesToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse *bool  `json:"disable_parallel_tool_use,omitempty"`
}

// MessagesThinking is the request's thinking object.
type MessagesThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
}

var knownMessagesFields = map[string]bool{
	"model": true, "max_tokens": true, "system": true, "messages": true, "tools": true,
	"tool_choice": true, "thinking": true, "temperature": true, "stream": true,
	"top_p": true, "top_k": true, "stop_sequences": true, "metadata": true, "service_tier": true,
}

// UnmarshalJSON decodes the request, rejecting fields the API does not know
// (it answers "Extra inputs are not permitted") and string-or-list forms it
// does not accept.
func (r *MessagesRequest) UnmarshalJSON(data []byte) error {
	type plain MessagesRequest
	if err := json.Unmarshal(data, (*plain)(r)); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	for k := range all {
		if !knownMessagesFields[k] {
			return fmt.Errorf("%s: Extra inputs are not permitted", k)
		}
	}
	if raw, ok := all["system"]; ok {
		blocks, _, err := blocksOf(raw)
		if err != nil {
			return fmt.Errorf("system: %v", err)
		}
		r.System = blocks
	}
	return nil
}

// UnmarshalJSON accepts content as a string or a list of blocks.
func (m *MessagesMessage) UnmarshalJSON(data []byte) error {
	var raw struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	blocks, empty, err := blocksOf(raw.Content)
	if err != nil {
		return err
	}
	m.Role, m.Content, m.empty = raw.Role, blocks, empty
	return nil
}

// MarshalJSON writes content as a list of blocks.
func (m MessagesMessage) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Role    string          `json:"role"`
		Content []MessagesBlock `json:"content"`
	}{m.Role, m.Content})
}

func blocksOf(raw json.RawMessage) ([]MessagesBlock, bool, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return nil, true, nil
		}
		return []MessagesBlock{{Type: "text", Text: &s}}, false, nil
	}
	var blocks []MessagesBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, false, fmt.Errorf("content: Input should be a valid string or list of content blocks")
	}
	return blocks, len(blocks) == 0, nil
}

// SystemText returns the text of the request's system blocks.
func (r *MessagesRequest) SystemText() string {
	var b strings.Builder
	for _, blk := range r.System {
		if blk.Text != nil {
			b.WriteString(*blk.Text)
		}
	}
	return b.String()
}

// ToolNames returns the names of the request's tools in order.
func (r *MessagesRequest) ToolNames() []string {
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Name
	}
	return names
}

// LastUserText returns the text blocks of the last user message.
func (r *MessagesRequest) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			var b strings.Builder
			for _, blk := range r.Messages[i].Content {
				if blk.Type == "text" && blk.Text != nil {
					b.WriteString(*blk.Text)
				}
			}
			return b.String()
		}
	}
	return ""
}

// anthropicError is Anthropic's error body:
// {"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}.
type anthropicError struct {
	status  int
	Type    string `json:"type"`
	Message string `json:"message"`
}

func (e *anthropicError) Error() string { return e.Message }

func anthropicInvalid(format string, args ...any) *anthropicError {
	return &anthropicError{status: 400, Type: "invalid_request_error", Message: fmt.Sprintf(format, args...)}
}

// anthropicErrorTypes maps statuses to the error types Anthropic documents.
var anthropicErrorTypes = map[int]string{
	400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
	403: "permission_error", 404: "not_found_error", 413: "request_too_large",
	429: "rate_limit_error", 500: "api_error", 504: "timeout_error", 529: "overloaded_error",
}

// anthropicFault turns a scripted fault into Anthropic's error: a Type the
// API knows is kept, any other (an OpenAI one) follows from the status.
func anthropicFault(f *Fault) *anthropicError {
	typ := f.Type
	if !isAnthropicErrorType(typ) {
		typ = anthropicErrorTypes[f.Status]
		if typ == "" {
			typ = "api_error"
		}
	}
	msg := f.Message
	if msg == "" {
		msg = "Internal server error"
	}
	return &anthropicError{status: f.Status, Type: typ, Message: msg}
}

func isAnthropicErrorType(t string) bool {
	for _, v := range anthropicErrorTypes {
		if v == t {
			return true
		}
	}
	return false
}
