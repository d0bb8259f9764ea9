package llmtest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/parleyhq/parley/pkg/llm/openai/wire"
)

// ChatRequest is a chat-completions request body as the server parsed it. The
// types are the server's own, not a client library's, so a client bug cannot
// hide behind a shared misunderstanding of the wire format.
type ChatRequest struct {
	Model               string              `json:"model"`
	Messages            []ChatMessage       `json:"messages"`
	Tools               []wire.Tool         `json:"tools,omitempty"`
	ToolChoice          json.RawMessage     `json:"tool_choice,omitempty"`
	ParallelToolCalls   *bool               `json:"parallel_tool_calls,omitempty"`
	Stream              bool                `json:"stream,omitempty"`
	StreamOptions       *wire.StreamOptions `json:"stream_options,omitempty"`
	Temperature         *float64            `json:"temperature,omitempty"`
	MaxTokens           *int                `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int                `json:"max_completion_tokens,omitempty"`
	// Extra holds every top-level field not named above, so tests can check
	// provider-specific options were passed through.
	Extra map[string]json.RawMessage `json:"-"`
}

// ChatMessage is one message of a request, with the fake's readers (Text,
// ImageURLs).
type ChatMessage struct{ wire.Message }

var knownRequestFields = map[string]bool{
	"model": true, "messages": true, "tools": true, "tool_choice": true,
	"parallel_tool_calls": true, "stream": true, "stream_options": true,
	"temperature": true, "max_tokens": true, "max_completion_tokens": true,
}

// UnmarshalJSON decodes the known fields and keeps the rest in Extra.
func (r *ChatRequest) UnmarshalJSON(data []byte) error {
	type plain ChatRequest
	if err := json.Unmarshal(data, (*plain)(r)); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	for k, v := range all {
		if !knownRequestFields[k] {
			if r.Extra == nil {
				r.Extra = map[string]json.RawMessage{}
			}
			r.Extra[k] = v
		}
	}
	return nil
}

// System returns the text of the request's system (or developer) messages.
func (r *ChatRequest) System() string {
	var parts []string
	for _, m := range r.Messages {
		if m.Role == "system" || m.Role == "developer" {
			parts = append(parts, m.Text())
		}
	}
	return strings.Join(parts, "\n")
}

// LastUserText returns the text of the last user message, or "".
func (r *ChatRequest) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Text()
		}
	}
	return ""
}

// ToolNames returns the names of the request's tools in order.
func (r *ChatRequest) ToolNames() []string {
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Function.Name
	}
	return names
}

// Text returns the message content as text: the string itself, or the text
// parts of a content array joined together.
func (m ChatMessage) Text() string {
	s, _ := contentText(m.Content)
	return s
}

func contentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
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
		return "", fmt.Errorf("content must be a string or an array of content parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// apiError is an OpenAI error with the status it is answered with.
type apiError struct {
	status int
	body   wire.Error
}

func (e *apiError) Error() string { return e.body.Message }

func invalidRequest(param, format string, args ...any) *apiError {
	e := &apiError{status: 400, body: wire.Error{Message: fmt.Sprintf(format, args...), Type: "invalid_request_error"}}
	if param != "" {
		e.body.Param = &param
	}
	return e
}

func errorBody(e *apiError) []byte {
	b, _ := json.Marshal(wire.ErrorBody{Error: e.body})
	return b
}
