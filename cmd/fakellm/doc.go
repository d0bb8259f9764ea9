// Command fakellm serves the strict fake OpenAI-compatible API of
// pkg/llm/llmtest, and its Anthropic Messages API, for demos and manual
// testing of `parley chat`, the admin UI preview or curl, without an API key
// or a bill.
//
//	fakellm [-addr 127.0.0.1:8089] [-key KEY] [-script FILE] [-latency 0s] [-chunk-delay 0s] [-fragment 8]
//	PARLEY_LLM_BASE_URL=http://127.0.0.1:8089/v1 parley chat --config bot.json
//	PARLEY_LLM_PROVIDER=anthropic PARLEY_LLM_API_KEY=any PARLEY_LLM_BASE_URL=http://127.0.0.1:8089 parley chat --config bot.json
//
// Replies come from the script file in order, one per request that passes
// validation; once it runs out (or without one) the server echoes: it answers
// the last user message with "You said: ..." and a tool result with
// "Tool <id> returned: ...". The script is a JSON array of replies:
//
//	[
//	  {"text": "Let me check.",
//	   "tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}],
//	   "usage": {"input_tokens": 120, "output_tokens": 15}},
//	  {"text": "It is sunny in Paris.", "finish_reason": "stop"},
//	  {"fault": {"status": 429, "retry_after": "1", "type": "requests",
//	             "code": "rate_limit_exceeded", "message": "slow down"}},
//	  {"text": "cut short", "fault": {"cut_after_chunks": 2}},
//	  {"fault": {"disconnect": true}}
//	]
//
// Arguments are sent verbatim, so malformed JSON can be scripted too.
//
// A bot with a knowledge base (docs/knowledge.md) gets echoes that cite it:
// when search_knowledge is offered, the user's text is searched first; the
// numbered passages that come back (or auto mode's, in the system prompt)
// are answered with the first passage's text and its marker [1]. A script
// can call search_knowledge and answer with [n] markers like any tool.
//
// POST /v1/embeddings answers any model with deterministic 256-dimension
// vectors of hashed words, word pairs and character trigrams (see
// llmtest.Embed), so a knowledge base can be indexed and searched offline.
//
// POST /v1/moderations flags a text that has one of
// llmtest.DefaultModerationWords ("kill", "bomb", "hateful", "selfharm")
// as a whole word, so a bot's moderation guardrail can be tried offline.
package main
