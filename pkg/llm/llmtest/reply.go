package llmtest

import (
	"time"

	"github.com/parleyhq/parley/pkg/llm"
)

// ServerReply scripts the server's answer to one request: text, tool calls, or
// both, or a Fault instead.
type ServerReply struct {
	Text      string       `json:"text,omitempty"`
	ToolCalls []ServerCall `json:"tool_calls,omitempty"`
	// Thinking is the model's extended thinking, sent (signed) by the
	// Anthropic route when the request turns thinking on.
	Thinking string `json:"thinking,omitempty"`
	// Usage is reported as is; nil estimates it at four characters a token.
	Usage *llm.Usage `json:"usage,omitempty"`
	// FinishReason defaults to "tool_calls" when there are tool calls and to
	// "stop" otherwise.
	FinishReason string `json:"finish_reason,omitempty"`
	// Fault, when set, replaces or disturbs the answer.
	Fault *Fault `json:"fault,omitempty"`
}

// ServerCall is one tool call of a reply. Arguments is sent verbatim, so
// malformed JSON is scripted by writing it here. An empty ID is generated.
type ServerCall struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Fault injects a failure into one reply.
type Fault struct {
	// Status, when non-zero, answers with this HTTP status and an
	// OpenAI-shaped error body instead of the reply.
	Status int `json:"status,omitempty"`
	// RetryAfter is sent as the Retry-After header: seconds or an HTTP date.
	RetryAfter string `json:"retry_after,omitempty"`
	// Type and Code fill the error body ("requests"/"rate_limit_exceeded",
	// "insufficient_quota"/"insufficient_quota", "server_error"/"").
	Type    string `json:"type,omitempty"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	// Latency delays this reply (on top of Options.Latency).
	Latency time.Duration `json:"-"`
	// ChunkDelay slows this streamed reply's chunks (on top of
	// Options.ChunkDelay), so a test can act while it streams.
	ChunkDelay time.Duration `json:"-"`
	// CutAfterChunks, for streamed replies, drops the connection after this
	// many chunks, as a proxy or a crashing backend would.
	CutAfterChunks int `json:"cut_after_chunks,omitempty"`
	// HoldAfterChunks, for streamed replies, stops after this many chunks
	// and keeps the connection open until the caller goes away, as a model
	// that stalls mid-answer would: a test can stop the reply whenever it
	// gets there, however slow the machine.
	HoldAfterChunks int `json:"hold_after_chunks,omitempty"`
	// Disconnect drops the connection without answering at all.
	Disconnect bool `json:"disconnect,omitempty"`
	// InStream, for streamed Anthropic replies, sends the error as an
	// `error` event after message_start instead of as the HTTP status, as
	// the API does when it is overloaded midway.
	InStream bool `json:"in_stream,omitempty"`
}

// RateLimited is a 429 that passes with time, asking to wait retryAfter
// (seconds or an HTTP date; "" sends no header).
func RateLimited(retryAfter string) ServerReply {
	return ServerReply{Fault: &Fault{Status: 429, RetryAfter: retryAfter, Type: "requests", Code: "rate_limit_exceeded",
		Message: "Rate limit reached for requests. Please try again later."}}
}

// QuotaExhausted is the 429 of a spent budget, which waiting does not fix.
func QuotaExhausted() ServerReply {
	return ServerReply{Fault: &Fault{Status: 429, Type: "insufficient_quota", Code: "insufficient_quota",
		Message: "You exceeded your current quota, please check your plan and billing details."}}
}

// ServerFailure is a 500 from the provider.
func ServerFailure() ServerReply {
	return ServerReply{Fault: &Fault{Status: 500, Type: "server_error",
		Message: "The server had an error while processing your request. Sorry about that!"}}
}

// Overloaded is Anthropic's 529 overloaded_error, which another provider
// may not suffer from.
func Overloaded() ServerReply {
	return ServerReply{Fault: &Fault{Status: 529, Type: "overloaded_error", Message: "Overloaded"}}
}

// SpendLimitReached is Anthropic's refusal once the organization's credit
// balance is spent: no wait fixes it.
func SpendLimitReached() ServerReply {
	return ServerReply{Fault: &Fault{Status: 400, Type: "invalid_request_error",
		Message: "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}
}

// ContextTooLong is the 400 of a prompt over the model's window.
func ContextTooLong() ServerReply {
	return ServerReply{Fault: &Fault{Status: 400, Type: "invalid_request_error", Code: "context_length_exceeded",
		Message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens. Please reduce the length of the messages."}}
}

func (r ServerReply) finishReason() string {
	switch {
	case r.FinishReason != "":
		return r.FinishReason
	case len(r.ToolCalls) > 0:
		return "tool_calls"
	default:
		return "stop"
	}
}
