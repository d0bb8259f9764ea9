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
// Memory while a reply is awaited, which with many open streams is most of
// what they cost: the request body is not kept once sent (a retry
// marshals it again from the request, which the caller keeps anyway), so
// a long conversation costs nothing extra while its reply is awaited; the
// default transport's connections keep 1 KiB buffers; and the goroutine
// waiting in Stream sits in small frames, so its stack stays at 16 KiB.
// Over HTTPS the default transport speaks HTTP/2, so concurrent calls
// share connections. Over plain HTTP each waiting call needs a connection
// of its own, and the default transport sends it without net/http's
// Transport, whose two goroutines per connection would cost more than the
// rest of the call: the request is written and the response read in the
// caller's goroutine, idle connections are reused, and a call that finds
// its reused connection closed by the server goes out once more on a new
// one. A request the environment's proxy settings (HTTP_PROXY, NO_PROXY)
// send through a proxy still goes through net/http.
package openai
