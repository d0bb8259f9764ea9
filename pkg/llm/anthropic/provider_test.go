package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/anthropic"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

const testKey = "sk-ant-test-0123456789abcdef"

func newProvider(t testing.TB, tweak ...func(*anthropic.Config)) (*anthropic.Provider, *llmtest.Server) {
	t.Helper()
	s := llmtest.NewServer(t, llmtest.Options{APIKey: testKey, FragmentSize: 3})
	cfg := anthropic.Config{Name: "claude", BaseURL: s.BaseURL(), APIKey: testKey, MaxRetries: -1}
	for _, f := range tweak {
		f(&cfg)
	}
	p, err := anthropic.New(cfg)
	if err != nil {
		t.Fatalf("anthropic.New: %v", err)
	}
	return p, s
}

func weatherTool() llm.ToolDefinition {
	return llm.ToolDefinition{Name: "get_weather", Description: "Weather by city",
		Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)}
}

func request(msgs ...llm.Message) *llm.Request {
	return &llm.Request{Model: "claude-sonnet-4-5", System: "You are terse.", Messages: msgs,
		Tools: []llm.ToolDefinition{weatherTool()}, MaxTokens: 512}
}

// runToolDialog streams a two-call tool dialog and returns both responses.
func runToolDialog(t *testing.T, p *anthropic.Provider, s *llmtest.Server, req *llm.Request) (first, second *llm.Response, deltas []llm.Delta) {
	t.Helper()
	ctx := context.Background()
	s.Enqueue(
		llmtest.ServerReply{Thinking: "The user wants weather; call the tool.", Text: "Checking.",
			ToolCalls: []llmtest.ServerCall{{Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		llmtest.ServerReply{Text: "Sunny in Paris."},
	)
	collect := func(d llm.Delta) { deltas = append(deltas, d) }
	first, err := p.Stream(ctx, req, collect)
	if err != nil {
		t.Fatalf("first call: %v", err)
	}
	uses := first.Message.ToolUses()
	if len(uses) != 1 {
		t.Fatalf("first reply holds %d tool uses, want 1: %+v", len(uses), first.Message)
	}
	req.Messages = append(req.Messages, first.Message,
		llm.ToolResultMessage(llm.ToolResult{ToolUseID: uses[0].ID, Name: "get_weather", Content: `{"sky":"sunny"}`}))
	second, err = p.Stream(ctx, req, collect)
	if err != nil {
		t.Fatalf("second call: %v", err)
	}
	return first, second, deltas
}

func TestStreamRunsAToolDialogTheStrictFakeAccepts(t *testing.T) {
	p, s := newProvider(t)
	first, second, deltas := runToolDialog(t, p, s, request(llm.UserText("Weather in Paris?")))

	if first.StopReason != llm.StopToolUse || second.StopReason != llm.StopEndTurn {
		t.Errorf("stop reasons = %s, %s; want tool_use, end_turn", first.StopReason, second.StopReason)
	}
	if got := first.Message.ToolUses()[0]; got.Name != "get_weather" || string(got.Arguments) != `{"city":"Paris"}` {
		t.Errorf("tool use = %+v", got)
	}
	if second.Message.Text() != "Sunny in Paris." {
		t.Errorf("answer = %q", second.Message.Text())
	}
	if first.Usage.InputTokens == 0 || first.Usage.OutputTokens == 0 {
		t.Errorf("usage not reported: %+v", first.Usage)
	}
	var text, args strings.Builder
	for _, d := range deltas {
		switch d.Type {
		case llm.DeltaText:
			text.WriteString(d.Text)
		case llm.DeltaToolCall:
			args.WriteString(d.Arguments)
		case llm.DeltaThinking:
			t.Errorf("thinking delta without thinking turned on: %+v", d)
		}
	}
	if text.String() != "Checking.Sunny in Paris." || args.String() != `{"city":"Paris"}` {
		t.Errorf("streamed text %q and arguments %q", text.String(), args.String())
	}
	last := s.LastMessages()
	if last.SystemText() != "You are terse." || len(last.Messages) != 3 {
		t.Errorf("the fake saw system %q and %d messages", last.SystemText(), len(last.Messages))
	}
	for _, h := range []string{"X-Api-Key", "Anthropic-Version"} {
		if s.Requests()[0].Header.Get(h) == "" {
			t.Errorf("header %s not sent", h)
		}
	}
}

// The requests the strict fake accepted are also requests the official
// SDK's own types describe completely: decoding them into
// anthropic.MessageNewParams and encoding that again loses nothing.
func TestRequestsDecodeThroughTheSDKsOwnTypes(t *testing.T) {
	p, s := newProvider(t)
	req := request(llm.UserText("Weather in Paris?"))
	req.ThinkingBudget = 2048
	req.ToolChoice = "auto"
	parallel := false
	req.ParallelToolCalls = &parallel
	runToolDialog(t, p, s, req)
	for i, rec := range s.Requests() {
		if rec.Status != 200 {
			t.Fatalf("request %d answered %d: %s", i, rec.Status, rec.Body)
		}
		var params sdk.MessageNewParams
		if err := json.Unmarshal(rec.Body, &params); err != nil {
			t.Fatalf("request %d does not decode into MessageNewParams: %v", i, err)
		}
		again, err := json.Marshal(params)
		if err != nil {
			t.Fatal(err)
		}
		var want, got any
		_ = json.Unmarshal(rec.Body, &want)
		_ = json.Unmarshal(again, &got)
		delete(want.(map[string]any), "stream") // a parameter of the call, not of MessageNewParams
		if !reflect.DeepEqual(want, got) {
			t.Errorf("request %d changed going through the SDK's types:\nsent %s\n SDK %s", i, rec.Body, again)
		}
		if params.Thinking.OfEnabled == nil || params.ToolChoice.OfAuto == nil || len(params.System) != 1 {
			t.Errorf("request %d: the SDK sees thinking %+v, tool choice %+v", i, params.Thinking, params.ToolChoice)
		}
	}
}

func TestThinkingIsStreamedKeptAndReplayedWithItsSignature(t *testing.T) {
	p, s := newProvider(t)
	req := request(llm.UserText("Weather in Paris?"))
	req.ThinkingBudget = 2048
	first, second, deltas := runToolDialog(t, p, s, req)

	th := first.Message.Content[0]
	if th.Type != llm.BlockThinking || th.Thinking == nil || th.Thinking.Signature == "" || th.Thinking.Provider != anthropic.Kind {
		t.Fatalf("first block = %+v, want signed thinking", th)
	}
	var thinking strings.Builder
	for _, d := range deltas {
		if d.Type == llm.DeltaThinking {
			thinking.WriteString(d.Text)
		}
	}
	if thinking.String() != th.Thinking.Text || th.Thinking.Text == "" {
		t.Errorf("streamed thinking %q, kept %q", thinking.String(), th.Thinking.Text)
	}
	if second.Message.Text() != "Sunny in Paris." {
		t.Errorf("answer = %q", second.Message.Text())
	}
	if got := *s.LastMessages().Messages[1].Content[0].Signature; got != th.Thinking.Signature {
		t.Errorf("replayed signature %q, want %q", got, th.Thinking.Signature)
	}
	if req.MaxTokens != 512 {
		t.Errorf("the caller's request was changed")
	}
}

func TestThinkingTamperedOrDroppedIsRefusedByTheFake(t *testing.T) {
	cases := []struct {
		name   string
		change func(*llm.Message)
		want   string
	}{
		{"a changed thought", func(m *llm.Message) { m.Content[0].Thinking.Text += " (edited)" }, "Invalid `signature`"},
		{"a dropped thought", func(m *llm.Message) { m.Content = m.Content[1:] }, "must start with a thinking block"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, s := newProvider(t)
			req := request(llm.UserText("Weather in Paris?"))
			req.ThinkingBudget = 2048
			s.Enqueue(llmtest.ServerReply{Thinking: "Call the tool.", ToolCalls: []llmtest.ServerCall{{Name: "get_weather", Arguments: `{"city":"Paris"}`}}})
			first, err := p.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			tc.change(&first.Message)
			req.Messages = append(req.Messages, first.Message,
				llm.ToolResultMessage(llm.ToolResult{ToolUseID: first.Message.ToolUses()[0].ID, Content: "sunny"}))
			_, err = p.Complete(context.Background(), req)
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != llm.ErrBadRequest || !strings.Contains(e.Message, tc.want) {
				t.Fatalf("err = %v, want a bad request saying %q", err, tc.want)
			}
		})
	}
}

func TestSystemPromptAndToolsAreCachedAcrossCalls(t *testing.T) {
	p, s := newProvider(t)
	s.Enqueue(llmtest.ServerReply{Text: "One."}, llmtest.ServerReply{Text: "Two."})
	ctx := context.Background()
	req := request(llm.UserText("Hi"))
	first, err := p.Complete(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, first.Message, llm.UserText("Again"))
	second, err := p.Stream(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.Usage.CacheWriteTokens == 0 || first.Usage.CacheReadTokens != 0 {
		t.Errorf("first call usage %+v, want a cache write", first.Usage)
	}
	if second.Usage.CacheReadTokens != first.Usage.CacheWriteTokens || second.Usage.InputTokens <= second.Usage.CacheReadTokens {
		t.Errorf("second call usage %+v, want the first call's prefix read from cache", second.Usage)
	}
	sent := s.LastMessages()
	if sent.System[0].CacheControl == nil || sent.Tools[len(sent.Tools)-1].CacheControl == nil {
		t.Errorf("no cache_control on the system prompt and the last tool")
	}
}

func TestToolChoiceMapsOntoTheAPI(t *testing.T) {
	cases := []struct{ choice, wantType, wantName string }{
		{"required", "any", ""},
		{"none", "none", ""},
		{"get_weather", "tool", "get_weather"},
	}
	for _, tc := range cases {
		t.Run(tc.choice, func(t *testing.T) {
			p, s := newProvider(t)
			s.Enqueue(llmtest.ServerReply{Text: "ok"})
			req := request(llm.UserText("Hi"))
			req.ToolChoice = tc.choice
			if _, err := p.Complete(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			got := s.LastMessages().ToolChoice
			if got == nil || got.Type != tc.wantType || got.Name != tc.wantName {
				t.Errorf("tool_choice = %+v, want %s %s", got, tc.wantType, tc.wantName)
			}
		})
	}
}

func TestFailuresAreTypedErrors(t *testing.T) {
	cases := []struct {
		name       string
		reply      llmtest.ServerReply
		retries    int
		kind       llm.ErrorKind
		retryable  bool
		retryAfter time.Duration
		attempts   int
	}{
		{"a rate limit says how long to wait", llmtest.RateLimited("30"), 2, llm.ErrRateLimit, true, 30 * time.Second, 1},
		{"an overload is retryable elsewhere", llmtest.Overloaded(), -1, llm.ErrServer, true, 0, 1},
		{"a spent credit balance is not retried", llmtest.SpendLimitReached(), 2, llm.ErrQuota, false, 0, 1},
		{"a spend limit 429 is not retried", llmtest.ServerReply{Fault: &llmtest.Fault{Status: 429, Type: "rate_limit_error", RetryAfter: "0",
			Message: "You have reached your specified workspace API usage limits."}}, 2, llm.ErrQuota, false, 0, 1},
		{"a server failure is retryable", llmtest.ServerFailure(), -1, llm.ErrServer, true, 0, 1},
		{"a bad request is not", llmtest.ContextTooLong(), 2, llm.ErrBadRequest, false, 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, s := newProvider(t, func(c *anthropic.Config) { c.MaxRetries = tc.retries })
			s.Enqueue(tc.reply)
			_, err := p.Stream(context.Background(), request(llm.UserText("Hi")), nil)
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *llm.Error", err)
			}
			if e.Kind != tc.kind || e.Retryable != tc.retryable || e.RetryAfter != tc.retryAfter || e.Provider != "claude" {
				t.Errorf("err = %+v, want kind %s retryable %v after %v", e, tc.kind, tc.retryable, tc.retryAfter)
			}
			if n := len(s.Requests()); n != tc.attempts {
				t.Errorf("%d attempts, want %d", n, tc.attempts)
			}
		})
	}
}

func TestAnOverloadIsRetriedWhenRetriesAreAllowed(t *testing.T) {
	p, s := newProvider(t, func(c *anthropic.Config) { c.MaxRetries = 1 })
	overloaded := llmtest.Overloaded()
	overloaded.Fault.RetryAfter = "0"
	s.Enqueue(overloaded, llmtest.ServerReply{Text: "Fine."})
	resp, err := p.Stream(context.Background(), request(llm.UserText("Hi")), nil)
	if err != nil || resp.Message.Text() != "Fine." || len(s.Requests()) != 2 {
		t.Fatalf("resp %+v, err %v after %d requests", resp, err, len(s.Requests()))
	}
}

func TestAnOverloadMidStreamIsARetryableServerError(t *testing.T) {
	p, s := newProvider(t)
	s.Enqueue(llmtest.ServerReply{Fault: &llmtest.Fault{Status: 529, Type: "overloaded_error", Message: "Overloaded", InStream: true}})
	_, err := p.Stream(context.Background(), request(llm.UserText("Hi")), nil)
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrServer || !e.Retryable {
		t.Fatalf("err = %v, want a retryable server error", err)
	}
}

func TestABrokenStreamIsARetryableNetworkError(t *testing.T) {
	p, s := newProvider(t)
	s.Enqueue(llmtest.ServerReply{Text: "A long answer that breaks off.", Fault: &llmtest.Fault{CutAfterChunks: 4}})
	_, err := p.Stream(context.Background(), request(llm.UserText("Hi")), nil)
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrNetwork || !e.Retryable {
		t.Fatalf("err = %v, want a retryable network error", err)
	}
}

func TestAWrongKeyIsAnAuthErrorThatDoesNotEchoTheKey(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Options{APIKey: testKey})
	wrong := "sk-ant-wrong-key-abcdef123456"
	p, err := anthropic.New(anthropic.Config{BaseURL: s.BaseURL(), APIKey: wrong})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Complete(context.Background(), request(llm.UserText("Hi")))
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrAuth || e.Retryable {
		t.Fatalf("err = %v, want a non-retryable auth error", err)
	}
	if strings.Contains(err.Error(), wrong) || strings.Contains(e.Err.Error(), wrong) {
		t.Errorf("the error holds the key: %v", err)
	}
	if len(s.Requests()) != 1 {
		t.Errorf("%d attempts, want 1", len(s.Requests()))
	}
}

func TestTheEnvironmentsKeyIsNeverUsed(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", testKey)
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	s := llmtest.NewServer(t, llmtest.Options{APIKey: testKey})
	p, err := anthropic.New(anthropic.Config{BaseURL: s.BaseURL(), APIKey: "sk-ant-tenant-b-key"})
	if err != nil {
		t.Fatal(err)
	}
	s.Enqueue(llmtest.ServerReply{Text: "hi"})
	_, err = p.Complete(context.Background(), request(llm.UserText("Hi")))
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrAuth {
		t.Fatalf("err = %v: the provider must send its own key, not the environment's", err)
	}
}
