// Package openai is the OpenAI-compatible provider (OpenAI, Azure, Ollama,
// vLLM, DeepSeek, ...), built on go-openai over a go-retryablehttp client.
package openai
