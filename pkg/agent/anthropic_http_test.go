package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/llm/anthropic"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// These tests run the loop through the Anthropic provider against the
// strict Messages fake.

func overAnthropic(t *testing.T) (*llmtest.Server, agent.ProviderResolver) {
	t.Helper()
	srv := llmtest.NewServer(t, llmtest.Options{APIKey: "sk-ant-test", FragmentSize: 5})
	p, err := anthropic.New(anthropic.Config{BaseURL: srv.BaseURL(), APIKey: "sk-ant-test", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return srv, agent.Models(p, 0, "claude-sonnet-4-5")
}

func TestOverAnthropicThinkingIsStreamedAndReplayedThroughTheToolLoop(t *testing.T) {
	srv, resolver := overAnthropic(t)
	srv.Enqueue(
		llmtest.ServerReply{Thinking: "Look the weather up.", ToolCalls: []llmtest.ServerCall{{Name: "weather", Arguments: `{"q":"Oslo"}`}}},
		llmtest.ServerReply{Thinking: "Now answer.", Text: "Sunny in Oslo."},
		llmtest.ServerReply{Thinking: "Again.", ToolCalls: []llmtest.ServerCall{{Name: "weather", Arguments: `{"q":"Rome"}`}}},
		llmtest.ServerReply{Text: "Rainy in Rome."},
	)
	rec := &recorder{}
	a, err := agent.New(agent.Config{Resolver: resolver, Tools: toolSet(t, echo("weather")),
		System: "You are a weather bot.", MaxTokens: 1024, ThinkingBudget: 2048, Sink: rec})
	if err != nil {
		t.Fatal(err)
	}
	st := &agent.State{}
	if out, err := a.Send(context.Background(), st, "Oslo?"); err != nil || out.Text != "Sunny in Oslo." {
		t.Fatalf("outcome %+v, err %v", out, err)
	}
	// The state is stored and loaded between messages; thinking survives it.
	st = roundTrip(t, st)
	if out, err := a.Send(context.Background(), st, "Rome?"); err != nil || out.Text != "Rainy in Rome." {
		t.Fatalf("outcome %+v, err %v", out, err)
	}
	checkStatuses(t, srv, 200, 200, 200, 200)
	var thinking strings.Builder
	for _, d := range find[agent.ThinkingDelta](rec) {
		thinking.WriteString(d.Text)
	}
	if thinking.String() != "Look the weather up.Now answer.Again." {
		t.Errorf("thinking_delta events carried %q", thinking.String())
	}
}

func TestOverAnthropicAForcedToolChoiceHoldsForTheFirstCallOnly(t *testing.T) {
	srv, resolver := overAnthropic(t)
	srv.Enqueue(
		llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{Name: "weather", Arguments: `{"q":"Oslo"}`}}},
		llmtest.ServerReply{Text: "Sunny."},
	)
	a, err := agent.New(agent.Config{Resolver: resolver, Tools: toolSet(t, echo("weather")), ToolChoice: "weather"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(context.Background(), &agent.State{}, "Oslo?"); err != nil {
		t.Fatal(err)
	}
	recs := srv.Requests()
	if len(recs) != 2 {
		t.Fatalf("%d requests, want 2", len(recs))
	}
	first, second := recs[0].Messages.ToolChoice, recs[1].Messages.ToolChoice
	if first == nil || first.Type != "tool" || first.Name != "weather" || (second != nil && second.Type != "auto") {
		t.Fatalf("requests:\n%s\n%s", recs[0].Body, recs[1].Body)
	}
}
