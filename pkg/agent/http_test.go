package agent_test

import (
	"context"
	"testing"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/llm/openai"
)

// These tests run the loop through the real OpenAI-compatible provider
// against the strict fake server, over HTTP: what the loop sends must pass
// the same checks the real API applies.

func overHTTP(t *testing.T, models ...string) (*llmtest.Server, agent.ProviderResolver) {
	t.Helper()
	srv := llmtest.NewServer(t, llmtest.Options{APIKey: "sk-test", FragmentSize: 5})
	p, err := openai.New(openai.Config{BaseURL: srv.URL(), APIKey: "sk-test", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return srv, agent.Models(p, 0, models...)
}

func checkStatuses(t *testing.T, srv *llmtest.Server, want ...int) {
	t.Helper()
	recs := srv.Requests()
	if len(recs) != len(want) {
		t.Fatalf("the server saw %d requests, want %d", len(recs), len(want))
	}
	for i, r := range recs {
		if r.Status != want[i] {
			t.Fatalf("request %d answered %d, want %d: %s", i, r.Status, want[i], r.Body)
		}
	}
	if srv.Pending() != 0 {
		t.Fatalf("%d scripted replies unused", srv.Pending())
	}
}

func TestOverHTTPTwoToolsThenAnAnswer(t *testing.T) {
	srv, resolver := overHTTP(t, "gpt-4o-mini")
	srv.Enqueue(
		llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{Name: "weather", Arguments: `{"q":"Oslo"}`}, {Name: "time", Arguments: `{"q":"Oslo"}`}}},
		llmtest.ServerReply{Text: "Sunny in Oslo, and it is noon."},
	)
	rec := &recorder{}
	a, err := agent.New(agent.Config{Resolver: resolver, Tools: toolSet(t, echo("weather"), echo("time")),
		ParallelToolCalls: true, System: "You are a weather bot.", Sink: rec})
	if err != nil {
		t.Fatal(err)
	}
	st := &agent.State{}
	out, err := a.Send(context.Background(), st, "weather and time in Oslo?")
	if err != nil || out.Text != "Sunny in Oslo, and it is noon." {
		t.Fatalf("outcome %+v, err %v", out, err)
	}
	checkStatuses(t, srv, 200, 200)
	if got := rec.types(); got != "turn_start tool_call tool_call tool_result tool_result turn_end turn_start text_delta turn_end done" {
		t.Fatalf("events = %s", got)
	}
	if out.Usage.Total() == 0 {
		t.Fatal("usage from the stream was not counted")
	}
}

func TestOverHTTPARateLimitFallsOverToTheNextModel(t *testing.T) {
	srv, resolver := overHTTP(t, "gpt-4o", "gpt-4o-mini")
	srv.Enqueue(llmtest.RateLimited(""), llmtest.ServerReply{Text: "From the fallback."})
	rec := &recorder{}
	a, _ := agent.New(agent.Config{Resolver: resolver, Sink: rec})
	out, err := a.Send(context.Background(), &agent.State{}, "hi")
	if err != nil || out.Text != "From the fallback." {
		t.Fatalf("outcome %+v, err %v", out, err)
	}
	checkStatuses(t, srv, 429, 200)
	sw := find[agent.ProviderSwitch](rec)
	if len(sw) != 1 || sw[0].From != "openai/gpt-4o" || sw[0].To != "openai/gpt-4o-mini" {
		t.Fatalf("provider_switch = %+v", sw)
	}
}

func TestOverHTTPASpentQuotaStopsWithAnError(t *testing.T) {
	srv, resolver := overHTTP(t, "gpt-4o", "gpt-4o-mini")
	srv.Enqueue(llmtest.QuotaExhausted())
	rec := &recorder{}
	a, _ := agent.New(agent.Config{Resolver: resolver, Sink: rec})
	out, err := a.Send(context.Background(), &agent.State{}, "hi")
	if err == nil || out.StopReason != agent.StopError {
		t.Fatalf("outcome %+v, err %v", out, err)
	}
	checkStatuses(t, srv, 429)
	ev := find[agent.Error](rec)
	if len(ev) != 1 || ev[0].Code != "llm_quota" || ev[0].Retryable {
		t.Fatalf("error event = %+v", ev)
	}
}

func TestOverHTTPClientToolPauseAndResume(t *testing.T) {
	srv, resolver := overHTTP(t, "gpt-4o-mini")
	srv.Enqueue(
		llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "geo1", Name: "locate", Arguments: `{}`}}},
		llmtest.ServerReply{Text: "You are in Bergen."},
	)
	cfg := agent.Config{Resolver: resolver, Tools: toolSet(t, &goTool{name: "locate", client: true})}
	a, _ := agent.New(cfg)
	st := &agent.State{}
	out, err := a.Send(context.Background(), st, "where am I?")
	if err != nil || out.StopReason != agent.StopPaused {
		t.Fatalf("outcome %+v, err %v", out, err)
	}
	st = roundTrip(t, st)
	a, _ = agent.New(cfg)
	out, err = a.SubmitToolResults(context.Background(), st, []agent.ClientResult{{ID: "geo1", Content: `{"city":"Bergen"}`}})
	if err != nil || out.Text != "You are in Bergen." {
		t.Fatalf("resumed outcome %+v, err %v", out, err)
	}
	checkStatuses(t, srv, 200, 200)
}
