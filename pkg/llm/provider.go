package llm

import (
	"context"
	"encoding/json"
)

// Provider is a chat-completion backend. Implementations are safe for
// concurrent use.
type Provider interface {
	// Name identifies the provider in events, metrics and stored messages.
	Name() string
	// Complete runs one non-streaming completion.
	Complete(ctx context.Context, req *Request) (*Response, error)
	// Stream runs one streaming completion, calling onDelta for each fragment as
	// it arrives, and returns the assembled response once the stream ends.
	// onDelta may be nil.
	Stream(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error)
}

// Request is one completion request.
type Request struct {
	Model    string           `json:"model"`
	System   string           `json:"system,omitempty"`
	Messages []Message        `json:"messages"`
	Tools    []ToolDefinition `json:"tools,omitempty"`
	// ToolChoice is "", "auto", "none", "required", or the name of one of
	// Tools, which the model must then call.
	ToolChoice        string   `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool    `json:"parallel_tool_calls,omitempty"`
	Temperature       *float64 `json:"temperature,omitempty"`
	MaxTokens         int      `json:"max_tokens,omitempty"`
	// ThinkingBudget, when positive, turns on extended thinking with this
	// many tokens for it, on providers that have it (Anthropic); others
	// ignore it.
	ThinkingBudget int `json:"thinking_budget,omitempty"`
	// Extra is passed through to the provider's request body as is, for
	// provider-specific options the neutral request does not model.
	Extra map[string]any `json:"extra,omitempty"`
}

// ToolDefinition describes a tool the model may call.
type ToolDefinition struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// Strict asks the provider to hold the model to Parameters exactly
	// (OpenAI's strict mode); Parameters must then be a StrictSchema.
	Strict bool `json:"strict,omitempty"`
}

// Response is a finished completion.
type Response struct {
	Message    Message    `json:"message"`
	StopReason StopReason `json:"stop_reason"`
	Usage      Usage      `json:"usage"`
	// Model is the model that answered, as the provider reports it.
	Model string `json:"model"`
}

// StopReason says why the model stopped generating.
type StopReason string

// Provider-neutral stop reasons.
const (
	StopEndTurn       StopReason = "end_turn"
	StopToolUse       StopReason = "tool_use"
	StopMaxTokens     StopReason = "max_tokens"
	StopContentFilter StopReason = "content_filter"
)

// Usage counts the tokens of one or more completions. InputTokens counts
// every prompt token, cached ones included; CacheReadTokens and
// CacheWriteTokens say how many of them were read from or written to the
// provider's prompt cache.
type Usage struct {
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
}

// Add returns the sum of u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{InputTokens: u.InputTokens + o.InputTokens, OutputTokens: u.OutputTokens + o.OutputTokens,
		CacheReadTokens: u.CacheReadTokens + o.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens}
}

// Total returns input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// DeltaType names the kind of a streamed fragment.
type DeltaType string

// Streamed fragment kinds.
const (
	DeltaText     DeltaType = "text"
	DeltaToolCall DeltaType = "tool_call"
	DeltaThinking DeltaType = "thinking"
)

// Delta is one streamed fragment. For DeltaText and DeltaThinking, Text holds
// new text (of the answer or of the model's thinking). For
// DeltaToolCall, Index identifies the call within the message; ID and Name
// arrive with the first fragment of a call, Arguments in pieces.
type Delta struct {
	Type      DeltaType `json:"type"`
	Text      string    `json:"text,omitempty"`
	Index     int       `json:"index,omitempty"`
	ID        string    `json:"id,omitempty"`
	Name      string    `json:"name,omitempty"`
	Arguments string    `json:"arguments,omitempty"`
}
