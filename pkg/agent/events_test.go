package agent_test

import (
	"encoding/json"
	"testing"

	"github.com/parleyhq/parley/pkg/agent"
)

func TestEventJSON(t *testing.T) {
	tests := []struct {
		name  string
		event agent.Event
		want  string
	}{
		{"turn_start names the turn, model and provider", agent.TurnStart{Turn: 1, Model: "gpt-4o-mini", Provider: "openai"},
			`{"type":"turn_start","turn":1,"model":"gpt-4o-mini","provider":"openai"}`},
		{"text_delta carries text", agent.TextDelta{Text: "Hi"}, `{"type":"text_delta","text":"Hi"}`},
		{"thinking_delta carries the model's thinking", agent.ThinkingDelta{Text: "Hm"}, `{"type":"thinking_delta","text":"Hm"}`},
		{"tool_call carries arguments as an object", agent.ToolCall{ID: "c1", Name: "lookup", Arguments: json.RawMessage(`{"q":"x"}`)},
			`{"type":"tool_call","id":"c1","name":"lookup","arguments":{"q":"x"}}`},
		{"tool_call with no arguments shows an empty object", agent.ToolCall{ID: "c1", Name: "now"},
			`{"type":"tool_call","id":"c1","name":"now","arguments":{}}`},
		{"tool_call with malformed arguments keeps them as text", agent.ToolCall{ID: "c1", Name: "x", Arguments: json.RawMessage(`{"q":`)},
			`{"type":"tool_call","id":"c1","name":"x","arguments":{"_raw":"{\"q\":"}}`},
		{"tool_result always says is_error", agent.ToolResult{ID: "c1", Name: "lookup", Content: "ok", DurationMS: 12},
			`{"type":"tool_result","id":"c1","name":"lookup","is_error":false,"content":"ok","duration_ms":12}`},
		{"client_tool_request lists the calls", agent.ClientToolRequest{Calls: []agent.CallRequest{{ID: "c1", Name: "geo", Arguments: json.RawMessage(`{}`)}}},
			`{"type":"client_tool_request","calls":[{"id":"c1","name":"geo","arguments":{}}]}`},
		{"confirmation_request names the call", agent.ConfirmationRequest{ID: "c1", Name: "refund", Arguments: json.RawMessage(`{"amount":5}`)},
			`{"type":"confirmation_request","id":"c1","name":"refund","arguments":{"amount":5}}`},
		{"steering lists skipped ids", agent.Steering{Skipped: []string{"c2"}}, `{"type":"steering","skipped":["c2"]}`},
		{"steering with nothing skipped shows an empty list", agent.Steering{}, `{"type":"steering","skipped":[]}`},
		{"provider_switch says from and to", agent.ProviderSwitch{From: "openai/gpt-4o", To: "openai/gpt-4o-mini"},
			`{"type":"provider_switch","from":"openai/gpt-4o","to":"openai/gpt-4o-mini"}`},
		{"turn_end carries usage", agent.TurnEnd{Turn: 2, StopReason: agent.StopCompleted, Usage: usage(10, 5)},
			`{"type":"turn_end","turn":2,"stop_reason":"completed","usage":{"input_tokens":10,"output_tokens":5}}`},
		{"turn_end of a continuing run has an empty stop reason", agent.TurnEnd{Turn: 1},
			`{"type":"turn_end","turn":1,"stop_reason":"","usage":{"input_tokens":0,"output_tokens":0}}`},
		{"done carries the final text", agent.Done{Text: "Bye", Turns: 2, Usage: usage(1, 2), StopReason: agent.StopMaxTurns},
			`{"type":"done","text":"Bye","turns":2,"usage":{"input_tokens":1,"output_tokens":2},"stop_reason":"max_turns"}`},
		{"error says whether a retry may help", agent.Error{Code: "llm_rate_limit", Message: "slow down", Retryable: true},
			`{"type":"error","code":"llm_rate_limit","message":"slow down","retryable":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.event)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
