package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

func TestFailingHooks(t *testing.T) {
	tests := []struct {
		name     string
		hooks    agent.Hooks
		replies  []llmtest.Reply
		wantCode string
	}{
		{
			name: "OnMessage failing to save the user message stops before the model is called",
			hooks: agent.Hooks{OnMessage: func(context.Context, agent.Message) error {
				return errBoom
			}},
			wantCode: "persist_failed",
		},
		{
			name: "OnMessage failing on the assistant message stops the run",
			hooks: agent.Hooks{OnMessage: func(_ context.Context, m agent.Message) error {
				if m.Kind == agent.KindAssistant {
					return errBoom
				}
				return nil
			}},
			replies:  []llmtest.Reply{llmtest.Calls(llmtest.Call("c1", "lookup", `{}`))},
			wantCode: "persist_failed",
		},
		{
			name: "OnTurnEnd failing stops the run before any tool runs",
			hooks: agent.Hooks{OnTurnEnd: func(context.Context, agent.TurnInfo) (bool, error) {
				return false, errBoom
			}},
			replies:  []llmtest.Reply{llmtest.Calls(llmtest.Call("c1", "lookup", `{}`))},
			wantCode: "metering_failed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reported []error
			tt.hooks.OnError = func(_ context.Context, err error) { reported = append(reported, err) }
			h := newHarness(t, agent.Config{Tools: toolSet(t, echo("lookup")), Hooks: tt.hooks}, tt.replies...)
			out, err := h.agent.Send(context.Background(), h.state, "hi")
			h.strict()
			if out.StopReason != agent.StopError || !errors.Is(err, errBoom) {
				t.Fatalf("outcome %+v, err %v", out, err)
			}
			if len(reported) != 1 || !errors.Is(reported[0], errBoom) {
				t.Fatalf("OnError got %v", reported)
			}
			evs := find[agent.Error](h.events)
			if len(evs) != 1 || evs[0].Code != tt.wantCode || strings.Contains(evs[0].Message, "10.0.0.5") {
				t.Fatalf("error events = %+v; want code %s and no internal detail", evs, tt.wantCode)
			}
			if len(find[agent.ToolResult](h.events)) != 0 {
				t.Fatal("a tool ran after a hook failed")
			}
			if got := h.events.types(); !strings.HasSuffix(got, "error done") {
				t.Fatalf("events = %s, want them to end with error and done", got)
			}
		})
	}
}

func TestOnTurnEndSeesEveryCallsUsage(t *testing.T) {
	var infos []agent.TurnInfo
	h := newHarness(t, agent.Config{Tools: toolSet(t, echo("lookup")), Hooks: agent.Hooks{
		OnTurnEnd: func(_ context.Context, info agent.TurnInfo) (bool, error) {
			infos = append(infos, info)
			return true, nil
		}}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "lookup", `{}`)}, Usage: usage(100, 20)},
		llmtest.Reply{Text: "done", Usage: usage(150, 5)})
	out := h.send("hi")
	h.strict()
	if len(infos) != 2 || infos[0].ToolCalls != 1 || infos[1].RunUsage != usage(250, 25) || infos[1].Model != "test-model" {
		t.Fatalf("turn infos = %+v", infos)
	}
	if out.Usage != usage(250, 25) || h.state.TotalUsage != usage(250, 25) {
		t.Fatalf("usage = %+v, total %+v", out.Usage, h.state.TotalUsage)
	}
}

func TestNewRejectsABadConfig(t *testing.T) {
	if _, err := agent.New(agent.Config{}); err == nil {
		t.Fatal("a config without a resolver was accepted")
	}
	_, err := agent.New(agent.Config{Resolver: agent.Models(llmtest.NewScripted(), 0, "m"), RequireDoneTool: true,
		Tools: toolSet(t, echo("done"))})
	if err == nil || !strings.Contains(err.Error(), "done") {
		t.Fatalf("a tool named done in done-tool mode: err = %v", err)
	}
}

func TestBeforeModelCallAddsToEachTurnsSystemPrompt(t *testing.T) {
	var seen []int
	h := newHarness(t, agent.Config{Tools: toolSet(t, echo("lookup")), Hooks: agent.Hooks{
		BeforeModelCall: func(_ context.Context, msgs []llm.Message, _ int) (string, error) {
			seen = append(seen, len(msgs))
			return "## Passages\n[1] turn " + strings.Repeat("x", len(seen)), nil
		}}},
		llmtest.Calls(llmtest.Call("c1", "lookup", `{}`)), llmtest.Text("done [1]"))
	h.send("hi")
	h.strict()
	reqs := h.model.Requests()
	if len(reqs) != 2 || len(seen) != 2 || seen[0] != 1 || seen[1] != 3 {
		t.Fatalf("%d requests, hook saw %v messages", len(reqs), seen)
	}
	if !strings.HasSuffix(reqs[0].System, "You are a test bot.\n\n## Passages\n[1] turn x") || !strings.HasSuffix(reqs[1].System, "[1] turn xx") {
		t.Fatalf("system prompts:\n%s\n---\n%s", reqs[0].System, reqs[1].System)
	}
	if strings.Count(reqs[1].System, "## Passages") != 1 {
		t.Fatalf("the first turn's addition stayed:\n%s", reqs[1].System)
	}
}

func TestBeforeModelCallFailingStopsTheRunBeforeTheModel(t *testing.T) {
	h := newHarness(t, agent.Config{Hooks: agent.Hooks{
		BeforeModelCall: func(context.Context, []llm.Message, int) (string, error) { return "", errBoom }}})
	out, err := h.agent.Send(context.Background(), h.state, "hi")
	if out.StopReason != agent.StopError || !errors.Is(err, errBoom) || len(h.model.Requests()) != 0 {
		t.Fatalf("outcome %+v, err %v, %d model calls", out, err, len(h.model.Requests()))
	}
	if evs := find[agent.Error](h.events); len(evs) != 1 || evs[0].Code != "context_failed" {
		t.Fatalf("error events %+v", evs)
	}
}
