// Package llmtest fakes an LLM provider for tests, benchmarks and demos: a
// strict OpenAI-compatible HTTP server and a scripted in-process provider.
package llmtest
