package openai_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/llm/openai"
)

const testKey = "sk-test-0123456789abcdef"

// newProvider returns a provider pointed at a fresh strict fake. Backoff is
// short so retry tests stay fast; Retry-After is still honoured exactly.
func newProvider(t testing.TB, opts llmtest.Options, tweak ...func(*openai.Config)) (*openai.Provider, *llmtest.Server) {
	t.Helper()
	if opts.APIKey == "" {
		opts.APIKey = testKey
	}
	s := llmtest.NewServer(t, opts)
	cfg := openai.Config{Name: "fake", BaseURL: s.URL(), APIKey: testKey,
		RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond}
	for _, f := range tweak {
		f(&cfg)
	}
	p, err := openai.New(cfg)
	if err != nil {
		t.Fatalf("openai.New: %v", err)
	}
	return p, s
}

func weatherTool() llm.ToolDefinition {
	return llm.ToolDefinition{Name: "get_weather", Description: "Weather by city",
		Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}
}

func userRequest(text string) *llm.Request {
	return &llm.Request{Model: "gpt-4o-mini", System: "You are terse.", Messages: []llm.Message{llm.UserText(text)},
		Tools: []llm.ToolDefinition{weatherTool()}}
}

func TestCompleteSendsTheConversationTheAPIExpects(t *testing.T) {
	p, s := newProvider(t, llmtest.Options{})
	s.Enqueue(llmtest.ServerReply{Text: "Sunny.", Usage: &llm.Usage{InputTokens: 40, OutputTokens: 2}})
	zero, parallel := 0.0, false
	req := &llm.Request{
		Model:  "gpt-4o-mini",
		System: "You are terse.",
		Messages: []llm.Message{
			llm.UserText("Weather in Paris and Rome?"),
			{Role: llm.RoleAssistant, Content: []llm.Block{
				{Type: llm.BlockText, Text: "Checking."},
				{Type: llm.BlockToolUse, ToolUse: &llm.ToolUse{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}},
				{Type: llm.BlockToolUse, ToolUse: &llm.ToolUse{ID: "call_2", Name: "get_weather", Arguments: json.RawMessage(`"{city: Rome"`)}},
			}},
			llm.ToolResultMessage(llm.ToolResult{ToolUseID: "call_1", Content: "sunny"}),
			llm.ToolResultMessage(llm.ToolResult{ToolUseID: "call_2", Content: "unknown city", IsError: true}),
		},
		Tools:             []llm.ToolDefinition{weatherTool()},
		ToolChoice:        "auto",
		ParallelToolCalls: &parallel,
		Temperature:       &zero,
		MaxTokens:         256,
		Extra:             map[string]any{"seed": 7},
	}
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Message.Text() != "Sunny." || resp.StopReason != llm.StopEndTurn || resp.Usage != (llm.Usage{InputTokens: 40, OutputTokens: 2}) {
		t.Fatalf("response = %+v", resp)
	}
	got := s.LastRequest()
	if len(got.Messages) != 5 || got.Messages[0].Role != "system" || got.System() != "You are terse." {
		t.Fatalf("messages = %+v; want the system prompt first, then four", got.Messages)
	}
	asst := got.Messages[2]
	if asst.Text() != "Checking." || len(asst.ToolCalls) != 2 || asst.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` {
		t.Fatalf("assistant message = %+v", asst)
	}
	if asst.ToolCalls[1].Function.Arguments != `{city: Rome` {
		t.Errorf("unrepairable arguments went back as %q; want the model's own text", asst.ToolCalls[1].Function.Arguments)
	}
	if got.Messages[4].ToolCallID != "call_2" || got.Messages[4].Text() != "Error: unknown city" {
		t.Errorf("failed tool result = %+v; want it marked as an error", got.Messages[4])
	}
	if got.Temperature == nil || *got.Temperature != 0 {
		t.Errorf("temperature = %v; want an explicit 0", got.Temperature)
	}
	if got.MaxTokens == nil || *got.MaxTokens != 256 || got.ParallelToolCalls == nil || *got.ParallelToolCalls {
		t.Errorf("max_tokens %v, parallel_tool_calls %v", got.MaxTokens, got.ParallelToolCalls)
	}
	if string(got.ToolChoice) != `"auto"` || string(got.Extra["seed"]) != "7" {
		t.Errorf("tool_choice %s, extra %v", got.ToolChoice, got.Extra)
	}
	if names := got.ToolNames(); len(names) != 1 || names[0] != "get_weather" {
		t.Errorf("tools = %v", names)
	}
}

func TestCompleteReturnsToolCalls(t *testing.T) {
	tests := []struct {
		name     string
		args     string
		wantArgs string
	}{
		{"valid arguments are kept", `{"city":"Paris"}`, `{"city":"Paris"}`},
		{"a truncated object is repaired", `{"city": "Paris"`, `{"city": "Paris"}`},
		{"single quotes and a trailing comma are repaired", `{'city': 'Paris',}`, `{"city": "Paris"}`},
		{"empty arguments become an empty object", ``, `{}`},
		{"text that is no JSON at all is kept as a string", `:::`, `":::"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, s := newProvider(t, llmtest.Options{})
			s.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "call_9", Name: "get_weather", Arguments: tt.args}}})
			resp, err := p.Complete(context.Background(), userRequest("weather?"))
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			uses := resp.Message.ToolUses()
			if resp.StopReason != llm.StopToolUse || len(uses) != 1 || uses[0].ID != "call_9" || uses[0].Name != "get_weather" {
				t.Fatalf("response = %+v", resp)
			}
			if string(uses[0].Arguments) != tt.wantArgs {
				t.Fatalf("arguments = %s; want %s", uses[0].Arguments, tt.wantArgs)
			}
			if _, err := json.Marshal(resp.Message); err != nil {
				t.Fatalf("the message cannot be persisted: %v", err)
			}
		})
	}
}

func TestReasoningModelsGetMaxCompletionTokensAndNoTemperature(t *testing.T) {
	p, s := newProvider(t, llmtest.Options{})
	s.Enqueue(llmtest.ServerReply{Text: "ok"})
	temp := 0.3
	req := userRequest("hi")
	req.Model, req.Temperature, req.MaxTokens = "o3-mini", &temp, 500
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	got := s.LastRequest()
	if got.Temperature != nil || got.MaxTokens != nil || got.MaxCompletionTokens == nil || *got.MaxCompletionTokens != 500 {
		t.Fatalf("temperature %v, max_tokens %v, max_completion_tokens %v", got.Temperature, got.MaxTokens, got.MaxCompletionTokens)
	}
}

func TestRequestsTheProviderRefusesToSend(t *testing.T) {
	tests := []struct {
		name string
		req  *llm.Request
		want string
	}{
		{"no model", &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}, "names no model"},
		{"an unknown role", &llm.Request{Model: "m", Messages: []llm.Message{{Role: "robot"}}}, "unknown role"},
		{"an extra field the provider owns", &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")},
			Extra: map[string]any{"messages": []string{}}}, "cannot be overridden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, s := newProvider(t, llmtest.Options{})
			_, err := p.Complete(context.Background(), tt.req)
			var e *llm.Error
			if !asLLMError(err, &e) || e.Kind != llm.ErrBadRequest || !strings.Contains(e.Message, tt.want) {
				t.Fatalf("err = %v; want a bad_request saying %q", err, tt.want)
			}
			if n := len(s.Requests()); n != 0 {
				t.Fatalf("the server saw %d requests; want none", n)
			}
		})
	}
}

func TestNewRejectsUnusableConfig(t *testing.T) {
	for name, cfg := range map[string]openai.Config{
		"a base URL without a scheme": {BaseURL: "localhost:11434/v1"},
		"an unknown API type":         {APIType: "bedrock"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := openai.New(cfg); err == nil {
				t.Fatalf("New(%+v) succeeded", cfg)
			}
		})
	}
}

func TestAzureSendsTheKeyHeaderAndAPIVersion(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Options{})
	s.Enqueue(llmtest.ServerReply{Text: "ok"})
	// The fake serves /v1/...; Azure paths differ, so expect the fake's 404
	// and check what was asked for.
	p, err := openai.New(openai.Config{BaseURL: strings.TrimSuffix(s.URL(), "/v1"), APIKey: testKey, APIType: "azure", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = p.Complete(context.Background(), userRequest("hi"))
	recs := s.Requests()
	if len(recs) != 1 {
		t.Fatalf("server saw %d requests", len(recs))
	}
	if recs[0].Path != "/openai/deployments/gpt-4o-mini/chat/completions" || recs[0].Query != "api-version=2024-10-21" {
		t.Fatalf("asked for %s?%s; want the deployment path and the default api-version", recs[0].Path, recs[0].Query)
	}
	if recs[0].Header.Get("api-key") != testKey || recs[0].Header.Get("Authorization") != "" {
		t.Fatalf("Azure authenticates by the api-key header alone")
	}
}

func TestAnEmptyAssistantMessageIsLeftOut(t *testing.T) {
	p, s := newProvider(t, llmtest.Options{})
	s.Enqueue(llmtest.ServerReply{Text: "ok"})
	req := &llm.Request{Model: "gpt-4o-mini", Messages: []llm.Message{
		llm.UserText("hi"), {Role: llm.RoleAssistant}, llm.UserText("anyone there?"),
	}}
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatalf("Complete: %v; the strict fake rejects an assistant message without content", err)
	}
	if got := s.LastRequest().Messages; len(got) != 2 {
		t.Fatalf("sent %d messages; want the two user messages", len(got))
	}
}
