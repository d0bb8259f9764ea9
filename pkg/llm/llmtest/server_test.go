package llmtest_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// post sends body to the fake's chat-completions route.
func post(t *testing.T, s *llmtest.Server, body, key string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL()+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return resp, b
}

type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func decodeError(t *testing.T, b []byte) errorBody {
	t.Helper()
	var e errorBody
	if err := json.Unmarshal(b, &e); err != nil || e.Error.Message == "" {
		t.Fatalf("body %s is not an OpenAI-shaped error: %v", b, err)
	}
	return e
}

const weatherTool = `{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}`

func TestServerRejectsWhatTheRealAPIRejects(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantMsg string
	}{
		{"a request without a model", `{"messages":[{"role":"user","content":"hi"}]}`, "must provide a model"},
		{"a request without messages", `{"model":"m","messages":[]}`, "too short"},
		{"an unknown role", `{"model":"m","messages":[{"role":"robot","content":"hi"}]}`, "Invalid value: 'robot'"},
		{"a tool message with no preceding tool call",
			`{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"call_1","content":"x"}]}`,
			"must be a response to a preceeding message with 'tool_calls'"},
		{"a tool message answering an id the assistant never used",
			`{"model":"m","messages":[{"role":"user","content":"hi"},
			 {"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},
			 {"role":"tool","tool_call_id":"call_2","content":"x"}]}`,
			"must be a response to a preceeding message"},
		{"a tool call answered twice",
			`{"model":"m","messages":[{"role":"user","content":"hi"},
			 {"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},
			 {"role":"tool","tool_call_id":"call_1","content":"x"},{"role":"tool","tool_call_id":"call_1","content":"x"}]}`,
			"must be a response to a preceeding message"},
		{"an assistant tool call followed by a user message instead of its result",
			`{"model":"m","messages":[{"role":"user","content":"hi"},
			 {"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}},
			                                   {"id":"call_2","type":"function","function":{"name":"f","arguments":"{}"}}]},
			 {"role":"tool","tool_call_id":"call_1","content":"x"},{"role":"user","content":"and?"}]}`,
			"did not have response messages: call_2"},
		{"an assistant tool call left unanswered at the end",
			`{"model":"m","messages":[{"role":"user","content":"hi"},
			 {"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`,
			"did not have response messages: call_1"},
		{"an assistant tool call without an id",
			`{"model":"m","messages":[{"role":"user","content":"hi"},
			 {"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}]}`,
			"tool_calls[0].id"},
		{"a tool name with a space", `{"model":"m","messages":[{"role":"user","content":"hi"}],
			"tools":[{"type":"function","function":{"name":"get weather","parameters":{"type":"object"}}}]}`,
			"does not match pattern"},
		{"a tool name over 64 characters", `{"model":"m","messages":[{"role":"user","content":"hi"}],
			"tools":[{"type":"function","function":{"name":"` + strings.Repeat("a", 65) + `"}}]}`,
			"does not match pattern"},
		{"two tools with the same name", `{"model":"m","messages":[{"role":"user","content":"hi"}],
			"tools":[` + weatherTool + `,` + weatherTool + `]}`, "Duplicate function name"},
		{"parameters that are not an object schema", `{"model":"m","messages":[{"role":"user","content":"hi"}],
			"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"string"}}}]}`,
			"schema must be a JSON Schema of 'type: \"object\"'"},
		{"parameters that are not even an object", `{"model":"m","messages":[{"role":"user","content":"hi"}],
			"tools":[{"type":"function","function":{"name":"f","parameters":[1,2]}}]}`, "schema must be a JSON object"},
		{"a tool of a type other than function", `{"model":"m","messages":[{"role":"user","content":"hi"}],
			"tools":[{"type":"retrieval","function":{"name":"f"}}]}`, "Supported values are: 'function'"},
		{"stream_options without stream", `{"model":"m","stream_options":{"include_usage":true},
			"messages":[{"role":"user","content":"hi"}]}`, "only allowed when 'stream' is enabled"},
		{"parallel_tool_calls without tools", `{"model":"m","parallel_tool_calls":true,
			"messages":[{"role":"user","content":"hi"}]}`, "only allowed when 'tools' are specified"},
		{"a user message without content", `{"model":"m","messages":[{"role":"user"}]}`, "Missing required parameter: 'messages[0].content'"},
		{"an assistant message with neither content nor tool calls",
			`{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null},{"role":"user","content":"?"}]}`,
			"Missing required parameter: 'messages[1].content'"},
		{"a body that is not JSON", `{"model":`, "could not parse the JSON body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := llmtest.NewServer(t, llmtest.Options{})
			s.Enqueue(llmtest.ServerReply{Text: "should not be used"})
			resp, body := post(t, s, tt.body, "")
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status = %d (%s); want 400", resp.StatusCode, body)
			}
			e := decodeError(t, body)
			if e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, tt.wantMsg) {
				t.Fatalf("error = %+v; want an invalid_request_error saying %q", e.Error, tt.wantMsg)
			}
			if s.Pending() != 1 {
				t.Fatalf("a rejected request consumed a scripted reply")
			}
			if got := s.Requests(); len(got) != 1 || got[0].Status != http.StatusBadRequest {
				t.Fatalf("recorded %+v; want one request answered 400", got)
			}
		})
	}
}

func TestServerAcceptsAWellFormedToolConversation(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Options{})
	s.Enqueue(llmtest.ServerReply{Text: "It is sunny.", Usage: &llm.Usage{InputTokens: 7, OutputTokens: 3}})
	body := `{"model":"m","temperature":0,"vendor_option":{"a":1},"tools":[` + weatherTool + `],"messages":[
		{"role":"system","content":"Be brief."},
		{"role":"user","content":[{"type":"text","text":"Weather in Paris?"}]},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"sunny"}]}`
	resp, b := post(t, s, body, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d (%s); want 200", resp.StatusCode, b)
	}
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Choices) != 1 || out.Choices[0].Message.Content != "It is sunny." || out.Choices[0].FinishReason != "stop" {
		t.Fatalf("completion = %s", b)
	}
	if out.Usage.PromptTokens != 7 || out.Usage.CompletionTokens != 3 {
		t.Fatalf("usage = %+v; want the scripted 7/3", out.Usage)
	}
	req := s.LastRequest()
	if req.System() != "Be brief." || req.LastUserText() != "Weather in Paris?" {
		t.Fatalf("parsed system %q and user text %q", req.System(), req.LastUserText())
	}
	if req.Temperature == nil || *req.Temperature != 0 || string(req.Extra["vendor_option"]) != `{"a":1}` {
		t.Fatalf("temperature %v and extra %v were not recorded", req.Temperature, req.Extra)
	}
}

func TestServerChecksTheAPIKey(t *testing.T) {
	const key = "sk-test-right-key"
	tests := []struct {
		name       string
		key        string
		wantStatus int
	}{
		{"a missing key is refused", "", http.StatusUnauthorized},
		{"a wrong key is refused", "sk-wrong", http.StatusUnauthorized},
		{"the configured key is accepted", key, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := llmtest.NewServer(t, llmtest.Options{APIKey: key})
			s.Enqueue(llmtest.ServerReply{Text: "hi"})
			resp, b := post(t, s, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, tt.key)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d (%s); want %d", resp.StatusCode, b, tt.wantStatus)
			}
			if tt.wantStatus == http.StatusUnauthorized {
				if e := decodeError(t, b); e.Error.Code == nil || *e.Error.Code != "invalid_api_key" {
					t.Fatalf("error = %s; want code invalid_api_key", b)
				}
			}
		})
	}
}

// readStream returns the data payloads of an SSE body, and whether it ended
// with [DONE].
func readStream(t *testing.T, body io.Reader) ([]string, bool, error) {
	t.Helper()
	var events []string
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			return events, true, nil
		}
		events = append(events, data)
	}
	return events, false, sc.Err()
}

type chunk struct {
	Choices []struct {
		Delta struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

func TestServerStreamsTextAndToolCallsInFragments(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Options{FragmentSize: 4})
	s.Enqueue(llmtest.ServerReply{
		Text:      "Let me check that.",
		ToolCalls: []llmtest.ServerCall{{ID: "call_a", Name: "get_weather", Arguments: `{"city":"Paris"}`}, {Name: "get_time", Arguments: `{}`}},
		Usage:     &llm.Usage{InputTokens: 11, OutputTokens: 5},
	})
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(
		`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	events, done, err := readStream(t, resp.Body)
	if err != nil || !done {
		t.Fatalf("stream ended without [DONE]: %v", err)
	}
	var text strings.Builder
	args := map[int]*strings.Builder{}
	ids, names := map[int]string{}, map[int]string{}
	textChunks, argChunks, finish := 0, 0, ""
	var usage *[2]int
	for _, e := range events {
		var c chunk
		if err := json.Unmarshal([]byte(e), &c); err != nil {
			t.Fatalf("chunk %s: %v", e, err)
		}
		if c.Usage != nil {
			usage = &[2]int{c.Usage.PromptTokens, c.Usage.CompletionTokens}
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != "" {
				textChunks++
				text.WriteString(ch.Delta.Content)
			}
			for _, tc := range ch.Delta.ToolCalls {
				if args[tc.Index] == nil {
					args[tc.Index] = &strings.Builder{}
				}
				if tc.ID != "" {
					ids[tc.Index], names[tc.Index] = tc.ID, tc.Function.Name
				}
				if tc.Function.Arguments != "" {
					argChunks++
					args[tc.Index].WriteString(tc.Function.Arguments)
				}
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	if text.String() != "Let me check that." || textChunks < 4 {
		t.Errorf("text %q in %d chunks; want it whole, in at least 4", text.String(), textChunks)
	}
	if args[0].String() != `{"city":"Paris"}` || args[1].String() != `{}` || argChunks < 5 {
		t.Errorf("arguments %q, %q in %d chunks; want them whole and fragmented", args[0], args[1], argChunks)
	}
	if ids[0] != "call_a" || names[0] != "get_weather" || ids[1] == "" || names[1] != "get_time" {
		t.Errorf("ids %v names %v; want the scripted id and a generated one", ids, names)
	}
	if finish != "tool_calls" {
		t.Errorf("finish_reason = %q; want tool_calls", finish)
	}
	if usage == nil || *usage != [2]int{11, 5} {
		t.Errorf("usage = %v; want the scripted 11/5 in the last chunk", usage)
	}
}

func TestServerAnswersScriptedFaults(t *testing.T) {
	tests := []struct {
		name           string
		reply          llmtest.ServerReply
		wantStatus     int
		wantRetryAfter string
		wantCode       string
	}{
		{"a rate limit says when to come back", llmtest.RateLimited("3"), 429, "3", "rate_limit_exceeded"},
		{"an exhausted quota says so in its code", llmtest.QuotaExhausted(), 429, "", "insufficient_quota"},
		{"a server failure is a 500", llmtest.ServerFailure(), 500, "", ""},
		{"an overlong prompt is a 400 with its code", llmtest.ContextTooLong(), 400, "", "context_length_exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := llmtest.NewServer(t, llmtest.Options{})
			s.Enqueue(tt.reply)
			resp, b := post(t, s, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "")
			if resp.StatusCode != tt.wantStatus || resp.Header.Get("Retry-After") != tt.wantRetryAfter {
				t.Fatalf("status %d, Retry-After %q; want %d, %q", resp.StatusCode, resp.Header.Get("Retry-After"), tt.wantStatus, tt.wantRetryAfter)
			}
			e := decodeError(t, b)
			if got := e.Error.Code; (got == nil) != (tt.wantCode == "") || (got != nil && *got != tt.wantCode) {
				t.Fatalf("error %s; want code %q", b, tt.wantCode)
			}
		})
	}
}

func TestServerCutsAStreamMidway(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Options{FragmentSize: 2})
	s.Enqueue(llmtest.ServerReply{Text: "a long answer", Fault: &llmtest.Fault{CutAfterChunks: 3}})
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events, done, err := readStream(t, resp.Body)
	if done || err == nil {
		t.Fatalf("stream ended cleanly (done=%v, err=%v); want a broken connection", done, err)
	}
	if len(events) != 3 {
		t.Fatalf("got %d chunks before the cut; want 3", len(events))
	}
}

func TestServerHandlerSeesEachRequestOnceTheQueueIsEmpty(t *testing.T) {
	var seen []string
	s := llmtest.NewServer(t, llmtest.Options{Handler: func(r *llmtest.ChatRequest) llmtest.ServerReply {
		seen = append(seen, r.LastUserText())
		return llmtest.ServerReply{Text: "echo: " + r.LastUserText()}
	}})
	s.Enqueue(llmtest.ServerReply{Text: "scripted first"})
	for _, want := range []string{"scripted first", "echo: second"} {
		_, b := post(t, s, `{"model":"m","messages":[{"role":"user","content":"second"}]}`, "")
		if !strings.Contains(string(b), want) {
			t.Fatalf("reply %s; want %q", b, want)
		}
	}
	if len(seen) != 1 {
		t.Fatalf("handler saw %d requests; want only the one after the queue ran out", len(seen))
	}
}

func TestAnUnrecordedServerStaysStrictAndKeepsNothing(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Options{Unrecorded: true, Handler: func(r *llmtest.ChatRequest) llmtest.ServerReply {
		return llmtest.ServerReply{Text: "echo: " + r.LastUserText()}
	}})
	_, b := post(t, s, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "")
	if !strings.Contains(string(b), "echo: hi") {
		t.Fatalf("reply %s; want the handler's answer", b)
	}
	resp, b := post(t, s, `{"model":"m","messages":[]}`, "")
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("empty messages: status %d body %s; want 400", resp.StatusCode, b)
	}
	if got := s.Requests(); len(got) != 0 {
		t.Fatalf("kept %d records; want none", len(got))
	}
}

func TestServerSaysWhenTheScriptRunsOut(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Options{})
	resp, b := post(t, s, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "no scripted reply left") {
		t.Fatalf("status %d body %s; want a 400 naming the empty script", resp.StatusCode, b)
	}
}

func TestServerAnswersUnknownRoutesLikeTheAPI(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Options{})
	resp, err := http.Get(s.URL() + "/embeddings")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("status %d; want 404", resp.StatusCode)
	}
	decodeError(t, b)
}

func TestCloseCutsARequestTheServerIsStillDelaying(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Options{Latency: time.Hour})
	s.Enqueue(llmtest.ServerReply{Text: "never"})
	errc := make(chan error, 1)
	go func() {
		resp, err := http.Post(s.URL()+"/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	for len(s.Requests()) == 0 {
		time.Sleep(time.Millisecond)
	}
	s.Close()
	if err := <-errc; err == nil {
		t.Fatal("the delayed request was answered; want its connection cut")
	}
}
