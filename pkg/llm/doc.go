// Package llm holds the provider-neutral types of a chat completion: messages
// made of text, tool-use and tool-result blocks, tool definitions, usage, stop
// reasons, streamed deltas, typed errors that say whether a retry may help, and
// the model catalog. Providers (pkg/llm/openai) implement Provider.
package llm
