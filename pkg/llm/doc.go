// Package llm holds the provider-neutral types of a chat completion: messages
// made of text, tool-use and tool-result blocks, tool definitions, usage, stop
// reasons, streamed deltas, typed errors that say whether a retry may help, and
// the model catalog. Providers (pkg/llm/openai, pkg/llm/anthropic) implement
// Provider, and build their errors with StatusKind and Failures, which keep
// the API key out of them. Thinking blocks are a provider extra: kept in the history and
// replayed only to the provider kind that wrote them.
package llm
