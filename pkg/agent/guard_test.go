package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// wordGuard fires its rule where a text contains word.
type wordGuard struct {
	word, where string
}

func (g *wordGuard) Screen(_ context.Context, where, text string) (*agent.Verdict, error) {
	if where == g.where && strings.Contains(text, g.word) {
		return &agent.Verdict{Rule: "blocked_topic", Where: where, Reply: "I can't discuss that."}, nil
	}
	return nil, nil
}

func kinds(msgs []agent.Message) string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Kind)+":"+m.Text())
	}
	return strings.Join(out, " | ")
}

func TestAGuardrailOnTheInputAnswersWithItsReplyWithoutCallingTheModel(t *testing.T) {
	t.Parallel()
	h := newHarness(t, agent.Config{Guard: &wordGuard{word: "crypto", where: agent.WhereInput}})
	out := h.send("tell me about crypto")
	h.strict() // no reply scripted: a model call would fail
	if out.StopReason != agent.StopGuardrail || out.Text != "I can't discuss that." {
		t.Fatalf("outcome = %+v", out)
	}
	if got := h.events.types(); got != "guardrail done" {
		t.Fatalf("events = %s", got)
	}
	if ev := find[agent.Guardrail](h.events); ev[0].Rule != "blocked_topic" || ev[0].Where != "input" {
		t.Fatalf("guardrail event = %+v", ev)
	}
	want := "user:tell me about crypto | system_event:guardrail blocked_topic fired on the input | assistant:I can't discuss that."
	if got := kinds(h.saved); got != want {
		t.Fatalf("stored %s\nwant   %s", got, want)
	}
}

func TestAGuardrailOnTheOutputReplacesTheAnswerAndStillMetersIt(t *testing.T) {
	t.Parallel()
	g := &wordGuard{word: "crypto", where: agent.WhereOutput}
	metered := 0
	h := newHarness(t, agent.Config{Guard: g, Hooks: agent.Hooks{OnTurnEnd: func(context.Context, agent.TurnInfo) (bool, error) {
		metered++
		return true, nil
	}}}, llmtest.Text("buy crypto now"))
	out := h.send("any tips?")
	h.strict()
	if out.StopReason != agent.StopGuardrail || out.Text != "I can't discuss that." {
		t.Fatalf("outcome = %+v", out)
	}
	if metered != 1 {
		t.Fatalf("OnTurnEnd called %d times, want the refused answer metered once", metered)
	}
	want := "user:any tips? | system_event:guardrail blocked_topic fired on the output | assistant:I can't discuss that."
	if got := kinds(h.saved); got != want {
		t.Fatalf("stored %s\nwant   %s", got, want)
	}
	if ends := find[agent.TurnEnd](h.events); len(ends) != 1 || ends[0].StopReason != agent.StopGuardrail {
		t.Fatalf("turn_end = %+v", ends)
	}
}

func TestAnAnswerThatPassesTheGuardIsKept(t *testing.T) {
	t.Parallel()
	h := newHarness(t, agent.Config{Guard: &wordGuard{word: "crypto", where: agent.WhereOutput}}, llmtest.Text("hello"))
	if out := h.send("hi"); out.StopReason != agent.StopCompleted || out.Text != "hello" {
		t.Fatalf("outcome = %+v", out)
	}
	h.strict()
}
