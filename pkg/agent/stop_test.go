package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/tool"
)

// lookups returns replies that each call lookup with different arguments.
func lookups(n int) []llmtest.Reply {
	var out []llmtest.Reply
	for i := range n {
		out = append(out, llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("", "lookup", fmt.Sprintf(`{"q":"%d"}`, i))}, Usage: usage(100, 10)})
	}
	return out
}

func failing(name string) *goTool {
	return &goTool{name: name, fn: func(context.Context, json.RawMessage) (tool.Result, error) {
		return tool.Result{}, errors.New("backend unavailable")
	}}
}

func handoff(stop string) *goTool {
	return &goTool{name: "escalate", fn: func(context.Context, json.RawMessage) (tool.Result, error) {
		return tool.Result{Content: "A human will take over.", Stop: stop}, nil
	}}
}

func TestEachStopReason(t *testing.T) {
	blocking := &goTool{name: "lookup", fn: func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	}}
	tests := []struct {
		name    string
		cfg     agent.Config
		replies []llmtest.Reply
		want    agent.StopReason
		// wantText is the final text, when it matters.
		wantText string
	}{
		{name: "a text answer completes", replies: []llmtest.Reply{llmtest.Text("hi")},
			want: agent.StopCompleted, wantText: "hi"},
		{name: "a tool asking to complete ends the run after its batch",
			cfg:     agent.Config{Tools: toolSet(t, handoff("completed"), echo("lookup"))},
			replies: []llmtest.Reply{llmtest.Calls(llmtest.Call("", "escalate", `{}`), llmtest.Call("", "lookup", `{}`))},
			want:    agent.StopCompleted},
		{name: "too many turns stop at max_turns",
			cfg: agent.Config{Tools: toolSet(t, echo("lookup")), Limits: agent.Limits{MaxTurns: 3}}, replies: lookups(3),
			want: agent.StopMaxTurns},
		{name: "spending the token budget stops at token_budget",
			cfg: agent.Config{Tools: toolSet(t, echo("lookup")), Limits: agent.Limits{TokenBudget: 200}}, replies: lookups(2),
			want: agent.StopTokenBudget},
		{name: "the wall clock stops at timeout",
			cfg: agent.Config{Tools: toolSet(t, blocking), Limits: agent.Limits{Timeout: 20 * time.Millisecond}}, replies: lookups(1),
			want: agent.StopTimeout},
		{name: "the same call three times is a loop",
			cfg: agent.Config{Tools: toolSet(t, echo("lookup"))},
			replies: []llmtest.Reply{llmtest.Calls(llmtest.Call("", "lookup", `{"q":"x"}`)), llmtest.Calls(llmtest.Call("", "lookup", `{"q": "x"}`)),
				llmtest.Calls(llmtest.Call("", "lookup", `{"q":"x"}`))},
			want: agent.StopLoopDetected},
		{name: "two calls alternating twice are a loop",
			cfg: agent.Config{Tools: toolSet(t, echo("lookup"))},
			replies: []llmtest.Reply{llmtest.Calls(llmtest.Call("", "lookup", `{"q":"a"}`)), llmtest.Calls(llmtest.Call("", "lookup", `{"q":"b"}`)),
				llmtest.Calls(llmtest.Call("", "lookup", `{"q":"a"}`)), llmtest.Calls(llmtest.Call("", "lookup", `{"q":"b"}`))},
			want: agent.StopLoopDetected},
		{name: "turns whose tools all fail stop at too_many_errors",
			cfg: agent.Config{Tools: toolSet(t, failing("lookup")), Limits: agent.Limits{MaxConsecutiveErrors: 2}}, replies: lookups(2),
			want: agent.StopTooManyErrors},
		{name: "a client tool pauses",
			cfg:     agent.Config{Tools: toolSet(t, &goTool{name: "show_map", client: true})},
			replies: []llmtest.Reply{{Text: "Here is the map.", ToolCalls: []llm.ToolUse{llmtest.Call("", "show_map", `{}`)}}},
			want:    agent.StopPaused, wantText: "Here is the map."},
		{name: "a handoff tool hands off",
			cfg:     agent.Config{Tools: toolSet(t, handoff("handoff"))},
			replies: []llmtest.Reply{{Text: "Let me get a colleague.", ToolCalls: []llm.ToolUse{llmtest.Call("", "escalate", `{}`)}}},
			want:    agent.StopHandoff, wantText: "Let me get a colleague."},
		{name: "OnTurnEnd saying no stops at quota",
			cfg: agent.Config{Tools: toolSet(t, echo("lookup")), Hooks: agent.Hooks{OnTurnEnd: func(context.Context, agent.TurnInfo) (bool, error) {
				return false, nil
			}}},
			replies: lookups(1), want: agent.StopQuota},
		{name: "a provider error that a retry cannot fix stops with error",
			replies: []llmtest.Reply{llmtest.Fail(&llm.Error{Kind: llm.ErrAuth, Provider: "scripted", StatusCode: 401, Message: "invalid API key"})},
			want:    agent.StopError},
		{name: "retryable errors with no fallback left stop with error",
			replies: []llmtest.Reply{llmtest.Fail(&llm.Error{Kind: llm.ErrRateLimit, Message: "slow down", Retryable: true})},
			want:    agent.StopError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.cfg, tt.replies...)
			out := h.send("please help")
			h.strict()
			if out.StopReason != tt.want {
				t.Fatalf("stop reason = %s, want %s (events %s)", out.StopReason, tt.want, h.events.types())
			}
			if tt.wantText != "" && out.Text != tt.wantText {
				t.Fatalf("text = %q, want %q", out.Text, tt.wantText)
			}
			done := find[agent.Done](h.events)
			if len(done) != 1 || done[0].StopReason != tt.want {
				t.Fatalf("done events = %+v", done)
			}
			ends := find[agent.TurnEnd](h.events)
			if last := ends[len(ends)-1]; last.StopReason != tt.want {
				t.Fatalf("last turn_end = %+v", last)
			}
			if h.state.StopReason != tt.want {
				t.Fatalf("state stop reason = %s", h.state.StopReason)
			}
			if tt.want != agent.StopPaused && h.state.Paused() {
				t.Fatal("a finished run left pending calls")
			}
			// Whatever stopped the run, the dialog must stay one the API accepts.
			if err := llmtest.CheckRequest(&llm.Request{Model: "m", Messages: sentMessages(h.state)}); err != nil && tt.want != agent.StopPaused {
				t.Fatalf("the stored dialog is not valid for the next request: %v", err)
			}
		})
	}
}

// sentMessages returns what would be sent of a state, app-only kinds left out.
func sentMessages(st *agent.State) []llm.Message {
	var out []llm.Message
	for _, m := range st.Messages {
		if m.Kind.Sent() {
			out = append(out, m.Message)
		}
	}
	return out
}

func TestTerminationSummaryBecomesTheFinalText(t *testing.T) {
	replies := append(lookups(2), llmtest.Reply{Text: "I looked twice but ran out of steps; try narrowing the search.",
		Check: func(r *llm.Request) error {
			if len(r.Tools) != 0 {
				return errors.New("the summary call offered tools")
			}
			if !strings.Contains(r.Messages[len(r.Messages)-1].Text(), "max_turns") {
				return errors.New("the summary call does not say why the run stopped")
			}
			return nil
		}})
	var purposes []string
	h := newHarness(t, agent.Config{Tools: toolSet(t, echo("lookup")), TerminationSummary: true, Limits: agent.Limits{MaxTurns: 2},
		Hooks: agent.Hooks{OnTurnEnd: func(_ context.Context, info agent.TurnInfo) (bool, error) {
			purposes = append(purposes, info.Purpose)
			return true, nil
		}}}, replies...)
	out := h.send("search")
	h.strict()
	if out.StopReason != agent.StopMaxTurns || !strings.HasPrefix(out.Text, "I looked twice") {
		t.Fatalf("outcome = %+v", out)
	}
	if strings.Join(purposes, ",") != "turn,turn,summary" {
		t.Fatalf("metered calls = %v, want the summary metered too", purposes)
	}
}

func TestLimitsApplyPerUserMessage(t *testing.T) {
	h := newHarness(t, agent.Config{Tools: toolSet(t, echo("lookup")), Limits: agent.Limits{MaxTurns: 2}},
		append(lookups(1), llmtest.Text("first"), llmtest.Text("second"))...)
	if out := h.send("one"); out.StopReason != agent.StopCompleted {
		t.Fatalf("first run = %+v", out)
	}
	if out := h.send("two"); out.StopReason != agent.StopCompleted || out.Turns != 1 {
		t.Fatalf("second run = %+v, want a fresh turn count", out)
	}
	h.strict()
}
