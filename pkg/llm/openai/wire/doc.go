// Package wire holds the OpenAI Chat Completions shapes that more than one
// server of that format in Parley reads and writes: the API's OpenAI face
// (pkg/api) and the fake provider (pkg/llm/llmtest). They are OpenAI's own
// field names, not Parley's.
//
// The provider in pkg/llm/openai does not use them: it speaks through
// go-openai, and the fake server that tests it should not share a
// misunderstanding of the format with it.
package wire
