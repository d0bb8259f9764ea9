package anthropic_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// bookingTool has what strict tool use refuses (a minimum, a length, a
// pattern, a format it lacks), an optional argument, and a property named
// like a keyword.
const bookingSchema = `{"type":"object","properties":{
 "guests":{"type":"integer","minimum":1,"maximum":12},
 "email":{"type":"string","format":"email","maxLength":200},
 "phone":{"type":"string","format":"phone","pattern":"^[0-9+ ]+$"},
 "pattern":{"type":"string","description":"a fabric pattern"},
 "rooms":{"type":"array","items":{"type":"object","properties":{"kind":{"type":"string"}}},"minItems":2}},
 "required":["guests","email"]}`

// A config with llm.strict_tools prepares its tools with llm.StrictSchema
// and marks them Strict (pkg/agent); the Anthropic provider sends them
// with strict: true, in the subset of JSON Schema strict tool use takes.
func TestStrictToolsAreSentWithStrictAndASchemaTheStrictFakeAccepts(t *testing.T) {
	p, s := newProvider(t)
	params, err := llm.StrictSchema(json.RawMessage(bookingSchema))
	if err != nil {
		t.Fatal(err)
	}
	req := &llm.Request{Model: "claude-sonnet-4-5", Messages: []llm.Message{llm.UserText("Book for two.")}, MaxTokens: 256,
		Tools: []llm.ToolDefinition{{Name: "book", Description: "Books a stay", Parameters: params, Strict: true}, weatherTool()}}
	s.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{Name: "book", Arguments: `{"guests":2,"email":"a@b.example","phone":null,"pattern":null,"rooms":null}`}}})
	resp, err := p.Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatalf("the strict fake refused the strict tool: %v", err)
	}
	if resp.StopReason != llm.StopToolUse {
		t.Errorf("stop reason %s", resp.StopReason)
	}

	rec := s.Requests()[0]
	var params2 sdk.MessageNewParams
	if err := json.Unmarshal(rec.Body, &params2); err != nil {
		t.Fatalf("the request does not decode into the SDK's MessageNewParams: %v", err)
	}
	book, weather := params2.Tools[0].OfTool, params2.Tools[1].OfTool
	if book == nil || !book.Strict.Valid() || !book.Strict.Value {
		t.Fatalf("the strict tool is not sent with strict: true: %s", rec.Body)
	}
	if weather.Strict.Valid() {
		t.Errorf("a tool that is not strict is sent with strict: %s", rec.Body)
	}
	sent := string(mustJSON(t, book.InputSchema))
	for _, gone := range []string{"minimum", "maximum", "maxLength", `"format":"phone"`, `"^[0-9+ ]+$"`, "minItems"} {
		if strings.Contains(sent, gone) {
			t.Errorf("the strict schema still holds %s: %s", gone, sent)
		}
	}
	for _, kept := range []string{`"pattern":{`, `"format":"email"`, `"additionalProperties":false`, `"a fabric pattern"`} {
		if !strings.Contains(sent, kept) {
			t.Errorf("the strict schema lost %s: %s", kept, sent)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
