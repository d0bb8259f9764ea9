// Package llmtest fakes an LLM provider for tests, benchmarks and demos: a
// strict OpenAI-compatible HTTP server and a scripted in-process provider
// (NewScripted) for loop tests that need no HTTP.
//
// The server answers POST /v1/chat/completions, streamed and not, and is as
// strict as the real API: it rejects, with OpenAI-shaped 400 errors, a tool
// message that answers no pending tool call, an assistant tool call left
// without a result, unknown roles, invalid or duplicate tool names, parameter
// schemas that are not objects, a missing model or empty messages; with an
// APIKey set, a wrong bearer token is a 401.
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
