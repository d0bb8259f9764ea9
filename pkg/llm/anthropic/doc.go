// Package anthropic is the llm.Provider for Anthropic's Messages API (Claude,
// and servers that speak the same API, such as MiniMax's Anthropic-compatible
// endpoint), built on the official SDK github.com/anthropics/anthropic-sdk-go.
//
//	p, err := anthropic.New(anthropic.Config{APIKey: key})
//	resp, err := p.Stream(ctx, &llm.Request{Model: "claude-sonnet-4-5", ...}, onDelta)
//
// The SDK is configured from Config alone: it never reads ANTHROPIC_API_KEY
// or any other environment variable, so one tenant's provider cannot pick up
// the operator's key.
//
// Request mapping: the system prompt travels in the top-level system field;
// tool uses are assistant tool_use blocks and tool results tool_result blocks
// of the next user message (consecutive tool messages are merged into one,
// as the API requires alternating roles). max_tokens, which the API requires,
// defaults to Config.DefaultMaxTokens. Request.ToolChoice maps to auto, none,
// any ("required") or a named tool; ParallelToolCalls false sets
// disable_parallel_tool_use. Request.ThinkingBudget turns on extended
// thinking; thinking blocks come back as llm.BlockThinking with their
// signature and are replayed unchanged in later requests (the API rejects a
// tool loop whose thinking is missing or altered). Thinking blocks written by
// another provider kind are dropped.
//
// Prompt caching: unless Config.DisablePromptCache is set, the last tool
// definition and the system prompt carry cache_control breakpoints, so the
// unchanging prefix of every call of a dialog is read from Anthropic's cache.
// Usage reports cache reads and writes (llm.Usage.CacheReadTokens,
// CacheWriteTokens); InputTokens counts all prompt tokens, cached ones
// included.
//
// Stop reasons: end_turn, stop_sequence and pause_turn are llm.StopEndTurn,
// tool_use llm.StopToolUse, max_tokens and model_context_window_exceeded
// llm.StopMaxTokens, refusal llm.StopContentFilter.
//
// Errors and retries: the SDK retries connection errors, 408, 409, 429 and 5xx
// (529 overloaded included) up to MaxRetries times, waiting what retry-after
// asks. A spent credit balance or spend limit (billing_error, or a 429 or 400
// that says so) is never retried and is llm.ErrQuota; a retry-after longer
// than MaxRetryAfter is not waited out here but returned as the error's
// RetryAfter, for the caller (a fallback provider) to decide. 400, 401, 403
// and 404 are not retried. Every failure is an *llm.Error whose text never
// holds the API key; overloaded_error (529) is a retryable llm.ErrServer, so
// the agent loop moves the turn to the next fallback.
package anthropic
