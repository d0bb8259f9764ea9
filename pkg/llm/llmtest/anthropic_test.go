package llmtest_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

func postMessages(t *testing.T, s *llmtest.Server, header map[string]string, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.BaseURL()+"/v1/messages", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", "k")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const (
	weather    = `{"name":"get_weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}`
	askWeather = `{"role":"user","content":"Weather?"}`
	callTool   = `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}]}`
)

func body(extra string, msgs ...string) string {
	b := `{"model":"claude-x","max_tokens":100,"tools":[` + weather + `],"messages":[` + strings.Join(msgs, ",") + `]`
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

func TestTheMessagesFakeRefusesWhatTheAPIRefuses(t *testing.T) {
	cases := []struct {
		name   string
		header map[string]string
		body   string
		status int
		want   string
	}{
		{"no api key", map[string]string{"X-Api-Key": ""}, body("", askWeather), 401, "x-api-key header is required"},
		{"a bearer token instead of x-api-key", map[string]string{"X-Api-Key": "", "Authorization": "Bearer k"}, body("", askWeather), 401, "authentication_error"},
		{"no anthropic-version", map[string]string{"Anthropic-Version": ""}, body("", askWeather), 400, "anthropic-version: header is required"},
		{"no max_tokens", nil, `{"model":"m","messages":[` + askWeather + `]}`, 400, "max_tokens: Field required"},
		{"no model", nil, `{"max_tokens":5,"messages":[` + askWeather + `]}`, 400, "model: Field required"},
		{"an unknown field", nil, body(`"frequency_penalty":1`, askWeather), 400, "frequency_penalty: Extra inputs are not permitted"},
		{"a system message", nil, body("", `{"role":"system","content":"be nice"}`, askWeather), 400, "top-level `system` parameter"},
		{"an assistant first", nil, body("", `{"role":"assistant","content":"hi"}`, askWeather), 400, "first message must use the"},
		{"two user messages in a row", nil, body("", askWeather, askWeather), 400, "roles must alternate"},
		{"an empty text block", nil, body("", `{"role":"user","content":[{"type":"text","text":""}]}`), 400, "text content blocks must be non-empty"},
		{"a tool use left unanswered", nil, body("", askWeather, callTool, `{"role":"user","content":"and?"}`), 400, "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1"},
		{"a tool use at the end", nil, body("", askWeather, callTool), 400, "without `tool_result`"},
		{"a result for an unknown call", nil, body("", askWeather, callTool, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"x"}]}`), 400, "unexpected `tool_use_id` found in `tool_result` blocks: toolu_9"},
		{"a result after text", nil, body("", askWeather, callTool, `{"role":"user","content":[{"type":"text","text":"here"},{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}]}`), 400, "must come before any other content"},
		{"a result without a call", nil, body("", `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}]}`), 400, "unexpected `tool_use_id`"},
		{"an invalid tool name", nil, `{"model":"m","max_tokens":5,"tools":[{"name":"get weather","input_schema":{"type":"object"}}],"messages":[` + askWeather + `]}`, 400, "String should match pattern"},
		{"a tool without input_schema", nil, `{"model":"m","max_tokens":5,"tools":[{"name":"x"}],"messages":[` + askWeather + `]}`, 400, "input_schema: Field required"},
		{"a tool field custom tools do not have", nil, `{"model":"m","max_tokens":5,"tools":[{"name":"x","input_schema":{"type":"object"},"parameters":{}}],"messages":[` + askWeather + `]}`, 400, "tools.0.custom.parameters: Extra inputs are not permitted"},
		{"a strict that is no boolean", nil, `{"model":"m","max_tokens":5,"tools":[{"name":"x","input_schema":{"type":"object"},"strict":"yes"}],"messages":[` + askWeather + `]}`, 400, "strict: Input should be a valid boolean"},
		{"a strict tool whose object is open", nil, `{"model":"m","max_tokens":5,"tools":[{"name":"x","strict":true,"input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}],"messages":[` + askWeather + `]}`, 400, "tools.0.custom.input_schema: For 'strict' tools, 'additionalProperties' must be set to false"},
		{"a strict tool with a numerical constraint", nil, `{"model":"m","max_tokens":5,"tools":[{"name":"x","strict":true,"input_schema":{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"],"additionalProperties":false}}],"messages":[` + askWeather + `]}`, 400, "tools.0.custom.input_schema.properties.n: For 'strict' tools, the keyword 'minimum' is not supported"},
		{"a strict tool with an open nested object", nil, `{"model":"m","max_tokens":5,"tools":[{"name":"x","strict":true,"input_schema":{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{}}}},"required":["a"],"additionalProperties":false}}],"messages":[` + askWeather + `]}`, 400, "tools.0.custom.input_schema.properties.a.items: For 'strict' tools, 'additionalProperties' must be set to false"},
		{"duplicate tool names", nil, `{"model":"m","max_tokens":5,"tools":[` + weather + `,` + weather + `],"messages":[` + askWeather + `]}`, 400, "Tool names must be unique"},
		{"a tool choice naming no tool", nil, body(`"tool_choice":{"type":"tool","name":"nope"}`, askWeather), 400, "Tool 'nope' not found"},
		{"a thinking budget over max_tokens", nil, body(`"thinking":{"type":"enabled","budget_tokens":2048}`, askWeather), 400, "`max_tokens` must be greater than `thinking.budget_tokens`"},
		{"thinking with a forced tool", nil, `{"model":"m","max_tokens":4000,"thinking":{"type":"enabled","budget_tokens":2048},"tool_choice":{"type":"any"},"tools":[` + weather + `],"messages":[` + askWeather + `]}`, 400, "forces tool use"},
		{"a thinking block with a forged signature", nil, body("", askWeather, `{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"forged"},{"type":"text","text":"ok"}]}`, askWeather), 400, "Invalid `signature`"},
		{"too many cache breakpoints", nil, `{"model":"m","max_tokens":5,"system":[` + strings.Repeat(`{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},`, 4) + `{"type":"text","text":"b","cache_control":{"type":"ephemeral"}}],"messages":[` + askWeather + `]}`, 400, "A maximum of 4 blocks with cache_control"},
		{"temperature above 1", nil, body(`"temperature":1.5`, askWeather), 400, "temperature"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := llmtest.NewServer(t, llmtest.Options{})
			s.Enqueue(llmtest.ServerReply{Text: "should not be sent"})
			status, got := postMessages(t, s, tc.header, tc.body)
			if status != tc.status || !strings.Contains(got, tc.want) {
				t.Fatalf("status %d body %s; want %d with %q", status, got, tc.status, tc.want)
			}
			var shape struct {
				Type  string `json:"type"`
				Error struct{ Type, Message string }
			}
			if json.Unmarshal([]byte(got), &shape) != nil || shape.Type != "error" || shape.Error.Type == "" {
				t.Errorf("error body %s is not Anthropic's shape", got)
			}
		})
	}
}

func TestTheMessagesFakeAcceptsAToolLoop(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Options{})
	s.Enqueue(llmtest.ServerReply{Text: "Sunny."})
	status, got := postMessages(t, s, nil, body("", askWeather, callTool,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"sunny"},{"type":"text","text":"thanks"}]}`))
	if status != 200 || !strings.Contains(got, `"stop_reason":"end_turn"`) {
		t.Fatalf("status %d body %s", status, got)
	}
}

// The stream's events come in the API's order.
func TestTheMessagesFakeStreamsEventsInTheAPIsOrder(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Options{FragmentSize: 4})
	s.Enqueue(llmtest.ServerReply{Thinking: "Think.", Text: "Hi there", ToolCalls: []llmtest.ServerCall{{Name: "get_weather", Arguments: `{"city":"Paris"}`}}})
	_, got := postMessages(t, s, nil, `{"model":"m","max_tokens":4000,"stream":true,"thinking":{"type":"enabled","budget_tokens":1024},"tools":[`+weather+`],"messages":[`+askWeather+`]}`)
	var events []string
	sc := bufio.NewScanner(strings.NewReader(got))
	for sc.Scan() {
		if ev, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			events = append(events, ev)
		}
	}
	want := "message_start ping " +
		"content_block_start content_block_delta content_block_delta content_block_delta content_block_stop " + // thinking, its two pieces and signature
		"content_block_start content_block_delta content_block_delta content_block_stop " + // text
		"content_block_start content_block_delta content_block_delta content_block_delta content_block_delta content_block_stop " + // tool use
		"message_delta message_stop"
	if strings.Join(events, " ") != want {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(events, " "), want)
	}
	for _, frag := range []string{`"type":"thinking_delta"`, `"type":"signature_delta"`, `"type":"input_json_delta"`, `"stop_reason":"tool_use"`} {
		if !strings.Contains(got, frag) {
			t.Errorf("stream lacks %s", frag)
		}
	}
}
