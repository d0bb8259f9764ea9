// Package llmtest fakes an LLM provider for tests, benchmarks and demos: a
// strict OpenAI-compatible HTTP server that also speaks Anthropic's Messages
// API, and a scripted in-process provider (NewScripted) for loop tests that
// need no HTTP.
//
// POST /v1/messages (BaseURL is its client's base URL) answers from the same
// script as chat completions, or from Options.MessagesHandler, and is as
// strict as Anthropic's API: x-api-key and anthropic-version are required,
// roles alternate starting with user, system is top-level only, max_tokens
// is required, every tool_use is answered by a tool_result at the start of
// the next user message and no tool_result answers anything else, tool
// names and schemas are checked, unknown fields are refused, and thinking
// blocks replayed in the history must carry the signature the fake gave
// them (with thinking on, the turn's tool loop must start with it). Errors
// have Anthropic's shape; Overloaded is a 529 and Fault.InStream sends an
// error event mid-stream. Streams send message_start, ping, each block's
// start, deltas and stop, message_delta and message_stop. Prompt caching is
// emulated: a prefix up to a cache_control breakpoint seen before is
// reported as cache_read_input_tokens, a new one as a cache write.
//
// The server answers POST /v1/chat/completions, streamed and not, and is as
// strict as the real API: it rejects, with OpenAI-shaped 400 errors, a tool
// message that answers no pending tool call, an assistant tool call left
// without a result, unknown roles, invalid or duplicate tool names, parameter
// schemas that are not objects, a missing model or empty messages; with an
// APIKey set, a wrong bearer token is a 401. POST /v1/embeddings and
// POST /v1/moderations answer deterministically (Embed; a moderation
// flags Options.ModerationWords as whole words).
//
//	s := llmtest.NewServer(t, llmtest.Options{APIKey: "sk-test", FragmentSize: 3})
//	s.Enqueue(
//		llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
//		llmtest.RateLimited("1"),            // a 429 with Retry-After: 1
//		llmtest.ServerReply{Text: "Sunny."},
//	)
//	p, _ := openai.New(openai.Config{BaseURL: s.URL(), APIKey: "sk-test"})
//	... run the code under test ...
//	s.LastRequest().System()  // what was sent; s.Requests() has every attempt with its arrival time
//
// Replies are taken from the queue in order; once it is empty, Options.Handler
// (which sees the parsed request) answers, and without one the server says the
// script ran out. Streams send text in fragments, each tool call's id and name
// and then its arguments in fragments, the finish reason, and usage in a last
// chunk when stream_options.include_usage asks for it. Faults: Options.Latency
// and Fault.Latency delay replies, Fault.Status answers with an error (see
// RateLimited, QuotaExhausted, ServerFailure, ContextTooLong), CutAfterChunks
// drops a stream midway, Disconnect drops the connection, and malformed tool
// arguments are scripted by writing them. With no latency set it answers at
// once, so benchmarks measure the caller, not the fake.
// cmd/fakellm serves the same fake on an address for demos.
package llmtest
