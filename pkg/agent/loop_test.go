package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/tool"
)

func TestAPlainAnswerCompletesInOneTurn(t *testing.T) {
	h := newHarness(t, agent.Config{}, llmtest.Reply{Text: "Hello there!", Usage: usage(10, 3),
		Check: func(r *llm.Request) error {
			if r.System != "You are a test bot." || len(r.Tools) != 0 || r.Model != "test-model" {
				return fmt.Errorf("unexpected request %+v", r)
			}
			return nil
		}})
	out := h.send("hi")
	h.strict()
	if out.StopReason != agent.StopCompleted || out.Text != "Hello there!" || out.Turns != 1 || out.Usage != usage(10, 3) {
		t.Fatalf("outcome = %+v", out)
	}
	if got := h.events.types(); got != "turn_start text_delta turn_end done" {
		t.Fatalf("events = %s", got)
	}
	if len(h.saved) != 2 || h.saved[0].Kind != agent.KindUser || h.saved[1].Kind != agent.KindAssistant ||
		h.saved[1].Model != "test-model" || h.saved[1].Provider != "scripted" {
		t.Fatalf("persisted = %+v", h.saved)
	}
	end := find[agent.TurnEnd](h.events)[0]
	if end.StopReason != agent.StopCompleted || end.Usage != usage(10, 3) {
		t.Fatalf("turn_end = %+v", end)
	}
}

func TestToolCalls(t *testing.T) {
	t.Run("one call's result goes back to the model", func(t *testing.T) {
		h := newHarness(t, agent.Config{Tools: toolSet(t, echo("lookup"))},
			llmtest.Calls(llmtest.Call("c1", "lookup", `{"q":"boots"}`)),
			llmtest.Reply{Text: "Found boots.", Check: func(r *llm.Request) error {
				last := r.Messages[len(r.Messages)-1].ToolResult()
				if last == nil || last.Content != `lookup ok {"q":"boots"}` {
					return fmt.Errorf("last message is not the tool result: %+v", r.Messages)
				}
				return nil
			}})
		out := h.send("find boots")
		h.strict()
		if out.Text != "Found boots." || out.Turns != 2 {
			t.Fatalf("outcome = %+v", out)
		}
		if got := h.events.types(); got != "turn_start tool_call tool_result turn_end turn_start text_delta turn_end done" {
			t.Fatalf("events = %s", got)
		}
	})

	t.Run("parallel calls finishing in reverse order are recorded in call order", func(t *testing.T) {
		secondDone := make(chan struct{})
		first := &goTool{name: "first", fn: func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
			select {
			case <-secondDone:
				return tool.Result{Content: "first"}, nil
			case <-ctx.Done():
				return tool.Result{}, errors.New("first ran before second finished: not parallel")
			}
		}}
		second := &goTool{name: "second", fn: func(context.Context, json.RawMessage) (tool.Result, error) {
			close(secondDone)
			return tool.Result{Content: "second"}, nil
		}}
		h := newHarness(t, agent.Config{Tools: toolSet(t, first, second), ParallelToolCalls: true},
			llmtest.Calls(llmtest.Call("a", "first", `{}`), llmtest.Call("b", "second", `{}`), llmtest.Call("c", "first", `{}`)),
			llmtest.Text("both done"))
		h.send("go")
		h.strict()
		if got := toolResults(h.state); !reflect.DeepEqual(got, []string{"a:first", "b:second", "c:first"}) {
			t.Fatalf("results = %v", got)
		}
		var ids []string
		for _, r := range find[agent.ToolResult](h.events) {
			ids = append(ids, r.ID)
		}
		if !reflect.DeepEqual(ids, []string{"a", "b", "c"}) {
			t.Fatalf("tool_result events in order %v", ids)
		}
		if p := h.model.Requests()[0].ParallelToolCalls; p == nil || !*p {
			t.Fatal("the model was not told parallel tool calls are allowed")
		}
	})

	t.Run("a tool error is fed back and the model recovers", func(t *testing.T) {
		calls := 0
		flaky := &goTool{name: "order", fn: func(_ context.Context, args json.RawMessage) (tool.Result, error) {
			calls++
			if calls == 1 {
				return tool.Result{}, errors.New("order 12 not found")
			}
			return tool.Result{Content: "order 21 shipped"}, nil
		}}
		h := newHarness(t, agent.Config{Tools: toolSet(t, flaky)},
			llmtest.Calls(llmtest.Call("c1", "order", `{"q":"12"}`)),
			llmtest.Calls(llmtest.Call("c2", "order", `{"q":"21"}`)),
			llmtest.Text("Order 21 has shipped."))
		out := h.send("where is my order")
		h.strict()
		res := find[agent.ToolResult](h.events)
		if out.StopReason != agent.StopCompleted || !res[0].IsError || res[0].Content != "order 12 not found" || res[1].IsError {
			t.Fatalf("outcome %+v, results %+v", out, res)
		}
		if h.state.ConsecutiveErrors != 0 {
			t.Fatalf("a success must reset the error count, got %d", h.state.ConsecutiveErrors)
		}
	})

	tests := []struct {
		name string
		call llm.ToolUse
		want string
	}{
		{"an unknown tool is answered with the tools that exist", llmtest.Call("c1", "nope", `{}`), `unknown tool "nope"; available tools: lookup`},
		{"invalid arguments are answered with what is wrong", llmtest.Call("c1", "lookup", `{"q":5}`), "invalid arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, agent.Config{Tools: toolSet(t, echo("lookup"))}, llmtest.Calls(tt.call), llmtest.Text("sorry"))
			h.send("go")
			h.strict()
			res := find[agent.ToolResult](h.events)
			if len(res) != 1 || !res[0].IsError || !strings.Contains(res[0].Content, tt.want) {
				t.Fatalf("result = %+v, want an error containing %q", res, tt.want)
			}
		})
	}
}

func TestSteeringSkipsTheRemainingCalls(t *testing.T) {
	var a *agent.Agent
	first := &goTool{name: "first", fn: func(context.Context, json.RawMessage) (tool.Result, error) {
		a.Steer("actually, cancel that")
		return tool.Result{Content: "first ran"}, nil
	}}
	h := newHarness(t, agent.Config{Tools: toolSet(t, first, echo("second"))},
		llmtest.Calls(llmtest.Call("a", "first", `{}`), llmtest.Call("b", "second", `{}`), llmtest.Call("c", "second", `{}`)),
		llmtest.Reply{Text: "Cancelled.", Check: func(r *llm.Request) error {
			if last := r.Messages[len(r.Messages)-1]; last.Role != llm.RoleUser || last.Text() != "actually, cancel that" {
				return fmt.Errorf("the steering message is not last: %+v", last)
			}
			return nil
		}})
	a = h.agent
	out := h.send("do three things")
	h.strict()
	steer := find[agent.Steering](h.events)
	if len(steer) != 1 || !reflect.DeepEqual(steer[0].Skipped, []string{"b", "c"}) {
		t.Fatalf("steering events = %+v", steer)
	}
	got := toolResults(h.state)
	if len(got) != 3 || got[0] != "a:first ran" || !strings.Contains(got[1], "Not run") || !strings.Contains(got[2], "Not run") {
		t.Fatalf("results = %v", got)
	}
	if out.Text != "Cancelled." {
		t.Fatalf("outcome = %+v", out)
	}
}

func TestFollowUpsStartAnotherRound(t *testing.T) {
	h := newHarness(t, agent.Config{},
		llmtest.Text("First answer."),
		llmtest.Reply{Text: "Second answer.", Check: func(r *llm.Request) error {
			if r.Messages[len(r.Messages)-1].Text() != "and another thing" {
				return errors.New("the follow-up is not the last message")
			}
			return nil
		}})
	h.agent.FollowUp("and another thing")
	out := h.send("one thing")
	h.strict()
	if out.Text != "Second answer." || out.Turns != 2 || out.StopReason != agent.StopCompleted {
		t.Fatalf("outcome = %+v", out)
	}
}

func TestRequireDoneTool(t *testing.T) {
	h := newHarness(t, agent.Config{RequireDoneTool: true, Tools: toolSet(t, echo("lookup"))},
		llmtest.Reply{Text: "I think I am finished.", Check: func(r *llm.Request) error {
			if r.Tools[len(r.Tools)-1].Name != "done" {
				return errors.New("the done tool is not offered")
			}
			return nil
		}},
		llmtest.Calls(llmtest.Call("d", "done", `{"message":"All set: your order is placed."}`)))
	out := h.send("place my order")
	h.strict()
	if out.StopReason != agent.StopCompleted || out.Text != "All set: your order is placed." || out.Turns != 2 {
		t.Fatalf("outcome = %+v", out)
	}
	nudged := false
	for _, m := range h.state.Messages {
		nudged = nudged || (m.Kind == agent.KindUser && m.Origin == agent.OriginLoop && strings.Contains(m.Text(), "done"))
	}
	if !nudged {
		t.Fatal("a text answer without done was not nudged")
	}
}

func TestAProviderSwitchFallsOverAndIsRecorded(t *testing.T) {
	primary := llmtest.NewScripted(llmtest.Fail(&llm.Error{Kind: llm.ErrServer, Provider: "primary", StatusCode: 503,
		Message: "overloaded", Retryable: true}))
	primary.ProviderName = "primary"
	backup := llmtest.NewScripted(llmtest.Text("Answer from the backup."))
	backup.ProviderName = "backup"
	resolver := agent.ResolverFunc(func(_ context.Context, info agent.ResolveInfo) (agent.Choice, error) {
		if info.Attempt == 0 {
			return agent.Choice{Provider: primary, Model: "big"}, nil
		}
		if info.Failed == nil {
			return agent.Choice{}, errors.New("fallback asked for without a failure")
		}
		return agent.Choice{Provider: backup, Model: "small"}, nil
	})
	h := newHarness(t, agent.Config{Resolver: resolver})
	h.state.Model, h.state.Provider = "big", "primary"
	out := h.send("hi")
	if out.Text != "Answer from the backup." {
		t.Fatalf("outcome = %+v", out)
	}
	sw := find[agent.ProviderSwitch](h.events)
	if len(sw) != 1 || sw[0].From != "primary/big" || sw[0].To != "backup/small" {
		t.Fatalf("provider_switch = %+v", sw)
	}
	last := h.state.Messages[len(h.state.Messages)-1]
	if last.Model != "small" || last.Provider != "backup" {
		t.Fatalf("the answer records %s/%s", last.Provider, last.Model)
	}
	if h.state.Model != "small" {
		t.Fatalf("state remembers model %q", h.state.Model)
	}
}

func TestToolTimeoutIsAnErrorResult(t *testing.T) {
	slow := &goTool{name: "slow", fn: func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	}}
	h := newHarness(t, agent.Config{Tools: toolSet(t, slow), Limits: agent.Limits{ToolTimeout: time.Millisecond}},
		llmtest.Calls(llmtest.Call("c1", "slow", `{}`)), llmtest.Text("It timed out."))
	out := h.send("go")
	h.strict()
	res := find[agent.ToolResult](h.events)
	if out.StopReason != agent.StopCompleted || !res[0].IsError || !strings.Contains(res[0].Content, "did not finish in time") {
		t.Fatalf("outcome %+v, result %+v", out, res)
	}
}

func TestOversizedToolResultsAreTruncated(t *testing.T) {
	big := &goTool{name: "big", fn: func(context.Context, json.RawMessage) (tool.Result, error) {
		return tool.Result{Content: strings.Repeat("é", 100)}, nil
	}}
	h := newHarness(t, agent.Config{Tools: toolSet(t, big), Context: agent.ContextPolicy{MaxToolResultChars: 51}},
		llmtest.Calls(llmtest.Call("c1", "big", `{}`)), llmtest.Text("ok"))
	h.send("go")
	h.strict()
	var m agent.Message
	for _, msg := range h.state.Messages {
		if msg.Kind == agent.KindToolResult {
			m = msg
		}
	}
	content := m.ToolResult().Content
	if !m.Tool.Truncated || !strings.HasPrefix(content, strings.Repeat("é", 25)+"\n[truncated: 50 of 200 bytes shown]") {
		t.Fatalf("truncated result = %q (meta %+v)", content, m.Tool)
	}
}

func TestSendAfterAnInterruptedReplyAnswersTheOpenCalls(t *testing.T) {
	h := newHarness(t, agent.Config{Tools: toolSet(t, echo("lookup"))}, llmtest.Text("Fresh start."))
	h.state.Messages = []agent.Message{
		{Kind: agent.KindUser, Message: llm.UserText("hi")},
		{Kind: agent.KindAssistant, Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolUse,
			ToolUse: &llm.ToolUse{ID: "lost", Name: "lookup", Arguments: json.RawMessage(`{}`)}}}}},
	}
	out := h.send("hello again")
	h.strict()
	if out.Text != "Fresh start." || !strings.Contains(toolResults(h.state)[0], "interrupted") {
		t.Fatalf("outcome %+v, results %v", out, toolResults(h.state))
	}
}

func TestSteeringDuringAParallelBatchSkipsTheCallsThatWouldPause(t *testing.T) {
	var a *agent.Agent
	steerer := &goTool{name: "search", fn: func(context.Context, json.RawMessage) (tool.Result, error) {
		a.Steer("forget it")
		return tool.Result{Content: "found"}, nil
	}}
	h := newHarness(t, agent.Config{ParallelToolCalls: true,
		Tools: toolSet(t, steerer, echo("lookup"), &goTool{name: "show", client: true})},
		llmtest.Calls(llmtest.Call("s", "search", `{}`), llmtest.Call("l", "lookup", `{}`), llmtest.Call("c", "show", `{}`)),
		llmtest.Text("OK, forgotten."))
	a = h.agent
	out := h.send("search and show")
	h.strict()
	steer := find[agent.Steering](h.events)
	if out.StopReason != agent.StopCompleted || len(steer) != 1 || !reflect.DeepEqual(steer[0].Skipped, []string{"c"}) {
		t.Fatalf("outcome %+v, steering %+v", out, steer)
	}
	if len(find[agent.ClientToolRequest](h.events)) != 0 {
		t.Fatal("the run paused for a call the user's new message made moot")
	}
}
