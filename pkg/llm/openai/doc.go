// Package openai is the OpenAI-compatible llm.Provider (OpenAI, Azure OpenAI,
// Ollama, vLLM, DeepSeek, ...), built on github.com/sashabaranov/go-openai
// over a github.com/hashicorp/go-retryablehttp client.
//
//	p, err := openai.New(openai.Config{BaseURL: settings.LLMBaseURL, APIKey: settings.LLMAPIKey})
//	resp, err := p.Stream(ctx, &llm.Request{Model: "gpt-4o-mini", ...}, onDelta)
//
// Base URLs of common servers:
//
//	OpenAI     https://api.openai.com/v1 (the default)
//	DeepSeek   https://api.deepseek.com/v1
//	Ollama     http://localhost:11434/v1 (any non-empty API key)
//	vLLM       http://localhost:8000/v1 (the key given to --api-key, if any)
//	Azure      https://RESOURCE.openai.azure.com with APIType "azure"; the
//	           request's model names the deployment
//
// Retries: 429 (except a spent quota, "insufficient_quota"), 5xx and
// connection errors are retried up to MaxRetries times with jittered
// exponential backoff, waiting exactly what Retry-After (seconds or an HTTP
// date) or retry-after-ms asks when the server says. 400, 401 and 403 are
// never retried, nor is a stream once its response has begun: the caller has
// seen part of it, so a broken stream is returned as a retryable
// llm.ErrNetwork for the caller to decide. Every failure is an *llm.Error
// whose text never holds the API key.
//
// Request mapping: the system prompt goes first as a system message; tool
// uses become assistant tool_calls and tool results "tool" messages with
// tool_call_id (a failed result's text starts with "Error:", as the API has
// no error flag). Temperature 0 is sent (go-openai would drop it); reasoning
// models (o1, o3, o4, gpt-5) get max_completion_tokens and no temperature.
// Request.Extra fields are merged into the JSON body, except the fields the
// provider owns (model, messages, stream, tools, ...).
//
// Streams ask for usage (stream_options.include_usage) and take it from the
// final chunk; tool-call fragments are assembled by index. Malformed tool
// arguments are repaired with github.com/kaptinlin/jsonrepair; arguments that
// cannot be repaired are kept as a JSON string holding the raw text, so the
// loop's schema validation tells the model what went wrong.
//
// Transport: net/http's, tuned like pkg/outbound's (HTTP/2 over HTTPS, so
// concurrent calls share connections; a pool of idle connections per host
// over plain HTTP), honouring HTTP_PROXY and NO_PROXY. Config.HTTPClient
// replaces it. A request written to a reused connection that then fails is
// not sent again: the server may be answering it. Under either, a body
// go-openai closes before its end (an answer decoded before the chunked
// terminator, a stream after [DONE]) has its rest read first, at most 2 KiB
// for at most 50 ms and never after the request's context ends, so a
// plain-HTTP connection goes back to the pool instead of being closed
// (drain.go).
package openai
