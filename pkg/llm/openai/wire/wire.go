package wire

import "encoding/json"

// Message is one message of a request's messages.
type Message struct {
	Role string `json:"role"`
	// Content is a string or a list of content parts; null for an
	// assistant message that only calls tools.
	Content    json.RawMessage `json:"content,omitempty"`
	Name       string          `json:"name,omitempty"`
	ToolCalls  []ToolCall      `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// ToolCall is an assistant's tool call, in a request, a reply or a stream
// chunk. A chunk's later fragments of a call carry only Index and a piece
// of the arguments.
type ToolCall struct {
	// Index orders calls in stream chunks only.
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function a tool call invokes.
type FunctionCall struct {
	Name string `json:"name,omitempty"`
	// Arguments is a JSON object as a string, as models produce it:
	// possibly malformed, or a fragment in a stream chunk.
	Arguments string `json:"arguments"`
}

// Tool is one tool definition of a request.
type Tool struct {
	Type     string   `json:"type"`
	Function Function `json:"function"`
}

// Function is a function tool's name, description and JSON Schema.
type Function struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// StreamOptions is a request's stream_options.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Usage is a reply's token counts.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Error is the object of an error body, {"error": {...}}.
type Error struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// ErrorBody is an error response's body.
type ErrorBody struct {
	Error Error `json:"error"`
}
