package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/tool"
)

func TestAConfirmedHandoffEndsTheRunAndAnswersTheOtherPendingCalls(t *testing.T) {
	escalate := &goTool{name: "escalate", confirm: true, fn: func(context.Context, json.RawMessage) (tool.Result, error) {
		return tool.Result{Content: "handed over", Stop: "handoff"}, nil
	}}
	cfg := agent.Config{Tools: toolSet(t, escalate, &goTool{name: "ask", client: true})}
	h := newHarness(t, cfg, llmtest.Calls(llmtest.Call("e", "escalate", `{}`), llmtest.Call("a", "ask", `{}`)))
	h.send("I want a human")
	out, err := h.agent.Confirm(context.Background(), h.state, "e", true)
	h.strict()
	if err != nil || out.StopReason != agent.StopHandoff || h.state.Paused() {
		t.Fatalf("outcome %+v, err %v, pending %+v", out, err, h.state.Pending)
	}
	if got := toolResults(h.state); len(got) != 2 || got[0] != "e:handed over" || !strings.Contains(got[1], "stopped") {
		t.Fatalf("results = %v", got)
	}
}

func TestALimitReachedDuringAPauseStopsTheResumedRun(t *testing.T) {
	cfg := agent.Config{Tools: toolSet(t, &goTool{name: "ask", client: true}), Limits: agent.Limits{MaxTurns: 1}}
	h := newHarness(t, cfg, llmtest.Calls(llmtest.Call("a", "ask", `{}`)))
	h.send("go")
	out, err := h.agent.SubmitToolResults(context.Background(), h.state, []agent.ClientResult{{ID: "a", Content: "ok"}})
	h.strict()
	if err != nil || out.StopReason != agent.StopMaxTurns {
		t.Fatalf("outcome %+v, err %v", out, err)
	}
}

func TestFailuresBeforeTheModelAnswers(t *testing.T) {
	tests := []struct {
		name     string
		resolver agent.ProviderResolver
		ctx      func() context.Context
		wantCode string
	}{
		{
			name: "a resolver with no provider stops with provider_unavailable",
			resolver: agent.ResolverFunc(func(context.Context, agent.ResolveInfo) (agent.Choice, error) {
				return agent.Choice{}, errors.New("tenant has no model configured")
			}),
			ctx: context.Background, wantCode: "provider_unavailable",
		},
		{
			name:     "a caller that gave up stops with canceled",
			resolver: agent.Models(llmtest.NewScripted(llmtest.Text("never")), 0, "m"),
			ctx: func() context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx
			},
			wantCode: "llm_canceled",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			a, err := agent.New(agent.Config{Resolver: tt.resolver, Sink: rec})
			if err != nil {
				t.Fatal(err)
			}
			out, err := a.Send(tt.ctx(), &agent.State{}, "hi")
			ev := find[agent.Error](rec)
			if err == nil || out.StopReason != agent.StopError || len(ev) != 1 || ev[0].Code != tt.wantCode {
				t.Fatalf("outcome %+v, err %v, error events %+v", out, err, ev)
			}
			if strings.Contains(ev[0].Message, "tenant has no model") {
				t.Fatal("the resolver's internal text reached the client")
			}
		})
	}
}

func TestAFailedCompactionIsReportedAndTheTurnGoesAhead(t *testing.T) {
	model := llmtest.NewScripted(
		llmtest.Fail(&llm.Error{Kind: llm.ErrServer, Message: "summariser down"}),
		llmtest.Text("answered anyway"),
	)
	var reported []error
	a, err := agent.New(agent.Config{Resolver: agent.Models(model, 20, "tiny"), Context: agent.ContextPolicy{KeepRecent: 1},
		Hooks: agent.Hooks{OnError: func(_ context.Context, err error) { reported = append(reported, err) }}})
	if err != nil {
		t.Fatal(err)
	}
	st := &agent.State{Messages: []agent.Message{
		{Kind: agent.KindUser, Message: llm.UserText(strings.Repeat("long question ", 20))},
		{Kind: agent.KindAssistant, Message: llm.AssistantText(strings.Repeat("long answer ", 20))},
	}}
	out, err := a.Send(context.Background(), st, "and now?")
	if err != nil || out.Text != "answered anyway" {
		t.Fatalf("outcome %+v, err %v", out, err)
	}
	if len(reported) != 1 || !strings.Contains(reported[0].Error(), "compaction") {
		t.Fatalf("OnError got %v", reported)
	}
}
