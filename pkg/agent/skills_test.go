package agent_test

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

func offeredNames(r *llm.Request) string {
	var names []string
	for _, d := range r.Tools {
		names = append(names, d.Name)
	}
	return strings.Join(names, " ")
}

var refundSkill = agent.Skill{Name: "refunds", Description: "Refund an order", Instructions: "Check the order first, then refund it.", Tools: []string{"refund"}}

func TestSkills(t *testing.T) {
	t.Run("a skill's tools are offered only once the model loads it, and stay loaded", func(t *testing.T) {
		h := newHarness(t, agent.Config{Tools: toolSet(t, echo("lookup"), echo("refund")), Skills: []agent.Skill{refundSkill}},
			llmtest.Calls(llmtest.Call("c1", agent.LoadSkillTool, `{"name":"refunds"}`)),
			llmtest.Calls(llmtest.Call("c2", "refund", `{"q":"A-1"}`)),
			llmtest.Text("Refunded."),
			llmtest.Text("Anything else?"))
		h.send("refund A-1")
		h.state = roundTrip(t, h.state) // as the platform saves and loads it between messages
		h.send("thanks")
		h.strict()
		reqs := h.model.Requests()
		want := []string{"lookup load_skill", "lookup load_skill refund", "lookup load_skill refund", "lookup load_skill refund"}
		for i, r := range reqs {
			if got := offeredNames(r); got != want[i] {
				t.Errorf("request %d offered %q, want %q", i, got, want[i])
			}
		}
		results := toolResults(h.state)
		if len(results) != 2 || !strings.Contains(results[0], "Check the order first, then refund it.") || results[1] != `c2:refund ok {"q":"A-1"}` {
			t.Fatalf("results = %v", results)
		}
		if len(h.state.Skills) != 1 || h.state.Skills[0] != "refunds" {
			t.Fatalf("loaded skills = %v", h.state.Skills)
		}
	})

	t.Run("calling a skill's tool before loading it is an error naming the skill", func(t *testing.T) {
		h := newHarness(t, agent.Config{Tools: toolSet(t, echo("refund")), Skills: []agent.Skill{refundSkill}},
			llmtest.Calls(llmtest.Call("c1", "refund", `{}`)),
			llmtest.Text("I need to load the skill."))
		h.send("refund")
		h.strict()
		if got := toolResults(h.state); len(got) != 1 || !strings.Contains(got[0], `call load_skill with one of: refunds`) {
			t.Fatalf("results = %v", got)
		}
	})

	t.Run("an unknown skill is an error listing the skills", func(t *testing.T) {
		h := newHarness(t, agent.Config{Skills: []agent.Skill{refundSkill}},
			llmtest.Calls(llmtest.Call("c1", agent.LoadSkillTool, `{"name":"returns"}`)),
			llmtest.Text("ok"))
		h.send("x")
		h.strict()
		if got := toolResults(h.state); len(got) != 1 || !strings.Contains(got[0], `unknown skill "returns"; the skills are: refunds`) {
			t.Fatalf("results = %v", got)
		}
	})

	t.Run("a bot without skills offers no load_skill tool", func(t *testing.T) {
		h := newHarness(t, agent.Config{Tools: toolSet(t, echo("refund"))}, llmtest.Text("hi"))
		h.send("x")
		if got := offeredNames(h.model.Requests()[0]); got != "refund" {
			t.Fatalf("offered %q", got)
		}
	})
}
