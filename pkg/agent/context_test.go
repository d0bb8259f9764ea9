package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/tool"
)

func TestCompactionSummarisesOldMessagesAndKeepsToolPairs(t *testing.T) {
	bulky := &goTool{name: "lookup", fn: func(context.Context, json.RawMessage) (tool.Result, error) {
		return tool.Result{Content: strings.Repeat("x", 300)}, nil
	}}
	model := llmtest.NewScripted(
		llmtest.Calls(llmtest.Call("c1", "lookup", `{"q":"1"}`)),
		llmtest.Calls(llmtest.Call("c2", "lookup", `{"q":"2"}`)),
		llmtest.Calls(llmtest.Call("c3", "lookup", `{"q":"3"}`), llmtest.Call("c4", "lookup", `{"q":"4"}`)),
		llmtest.Reply{Text: "SUMMARY: looked up 1 and 2.", Usage: usage(40, 8), Check: func(r *llm.Request) error {
			if len(r.Tools) != 0 {
				return errors.New("the compaction call offered tools")
			}
			if len(r.Messages) != 6 || r.Messages[4].ToolResult() == nil {
				return fmt.Errorf("compaction saw %d messages; want the five before the kept tail plus the prompt", len(r.Messages))
			}
			return nil
		}},
		llmtest.Reply{Text: "All four looked up.", Check: func(r *llm.Request) error {
			if len(r.Messages) != 4 || !strings.Contains(r.Messages[0].Text(), "SUMMARY") || len(r.Messages[1].ToolUses()) != 2 {
				return fmt.Errorf("after compaction the model saw %+v", r.Messages)
			}
			return nil
		}},
		llmtest.Reply{Text: "You're welcome.", Check: func(r *llm.Request) error {
			if len(r.Messages) != 6 || !strings.Contains(r.Messages[0].Text(), "SUMMARY") {
				return fmt.Errorf("a resumed dialog does not start from the summary: %d messages", len(r.Messages))
			}
			return nil
		}},
	)
	var purposes []string
	cfg := agent.Config{
		Resolver: agent.Models(model, 300, "small-window"),
		Tools:    toolSet(t, bulky),
		Context:  agent.ContextPolicy{KeepRecent: 2},
		Hooks: agent.Hooks{OnTurnEnd: func(_ context.Context, info agent.TurnInfo) (bool, error) {
			purposes = append(purposes, info.Purpose)
			return true, nil
		}},
	}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := &agent.State{}
	out, err := a.Send(context.Background(), st, "look up four things")
	if err != nil || out.Text != "All four looked up." {
		t.Fatalf("outcome %+v, err %v", out, err)
	}
	var summary *agent.Message
	for i := range st.Messages {
		if st.Messages[i].Kind == agent.KindSummary {
			summary = &st.Messages[i]
		}
	}
	if summary == nil || summary.Covers != 5 || st.Messages[summary.Covers].Kind != agent.KindAssistant {
		t.Fatalf("summary = %+v; want it to cover the messages before the assistant message of c3 and c4", summary)
	}
	if len(st.Messages[0].Text()) == 0 {
		t.Fatal("compaction must not remove stored messages")
	}
	if strings.Join(purposes, ",") != "turn,turn,turn,compaction,turn" {
		t.Fatalf("metered = %v", purposes)
	}

	st = roundTrip(t, st)
	a, _ = agent.New(cfg)
	if out, err := a.Send(context.Background(), st, "thanks"); err != nil || out.Text != "You're welcome." {
		t.Fatalf("after JSON: %+v, %v", out, err)
	}
	if err := model.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestEphemeralOutputsBeyondTheLastNAreReplaced(t *testing.T) {
	n := 0
	snapshot := &goTool{name: "snapshot", keep: 1, fn: func(context.Context, json.RawMessage) (tool.Result, error) {
		n++
		return tool.Result{Content: fmt.Sprintf("page state %d", n)}, nil
	}}
	h := newHarness(t, agent.Config{Tools: toolSet(t, snapshot, echo("lookup"))},
		llmtest.Calls(llmtest.Call("s1", "snapshot", `{}`)),
		llmtest.Calls(llmtest.Call("s2", "snapshot", `{}`), llmtest.Call("l1", "lookup", `{}`)),
		llmtest.Reply{Text: "ok", Check: func(r *llm.Request) error {
			var got []string
			for _, m := range r.Messages {
				if res := m.ToolResult(); res != nil {
					got = append(got, res.Content)
				}
			}
			if len(got) != 3 || !strings.Contains(got[0], "output removed") || got[1] != "page state 2" || !strings.HasPrefix(got[2], "lookup ok") {
				return fmt.Errorf("results the model saw: %q", got)
			}
			return nil
		}})
	h.send("look")
	h.strict()
	if got := toolResults(h.state); got[0] != "s1:page state 1" {
		t.Fatalf("the stored output was changed: %v", got)
	}
}

func TestAppOnlyMessagesAreNeverSent(t *testing.T) {
	h := newHarness(t, agent.Config{}, llmtest.Reply{Text: "ok", Check: func(r *llm.Request) error {
		for _, m := range r.Messages {
			if strings.Contains(m.Text(), "internal") {
				return errors.New("an app-only message reached the model")
			}
		}
		return nil
	}})
	for _, k := range []agent.Kind{agent.KindContextNote, agent.KindSystemEvent, agent.KindToolLog} {
		h.state.Messages = append(h.state.Messages, agent.Message{Kind: k, Message: llm.UserText("internal " + string(k))})
	}
	h.send("hi")
	h.strict()
}

func TestTheProvidersTokenCountTriggersCompaction(t *testing.T) {
	// Short text that the provider counts as many tokens, as CJK text is.
	model := llmtest.NewScripted(
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "lookup", `{}`)}, Usage: usage(900, 50)},
		llmtest.Reply{Text: "SUMMARY", Check: func(r *llm.Request) error {
			if len(r.Tools) != 0 {
				return errors.New("expected the compaction call")
			}
			return nil
		}},
		llmtest.Text("done"),
	)
	a, err := agent.New(agent.Config{Resolver: agent.Models(model, 1000, "m"), Tools: toolSet(t, echo("lookup")),
		Context: agent.ContextPolicy{KeepRecent: 2}})
	if err != nil {
		t.Fatal(err)
	}
	st := &agent.State{Messages: []agent.Message{
		{Kind: agent.KindUser, Message: llm.UserText("你好")},
		{Kind: agent.KindAssistant, Message: llm.AssistantText("你好！")},
	}}
	out, err := a.Send(context.Background(), st, "查订单")
	if err != nil || out.Text != "done" {
		t.Fatalf("outcome %+v, err %v", out, err)
	}
	if err := model.Err(); err != nil || model.Remaining() != 0 {
		t.Fatalf("model: %v, %d left", err, model.Remaining())
	}
	if s := st.Messages[len(st.Messages)-2]; s.Kind != agent.KindSummary || s.Covers != 3 {
		t.Fatalf("want a summary covering the first three messages before the answer, got %+v", s)
	}
}

func TestTheConfigChoosesTheCompactionPromptOrTurnsCompactionOff(t *testing.T) {
	bulky := &goTool{name: "lookup", fn: func(context.Context, json.RawMessage) (tool.Result, error) {
		return tool.Result{Content: strings.Repeat("x", 300)}, nil
	}}
	script := func(compaction ...llmtest.Reply) *llmtest.Scripted {
		replies := []llmtest.Reply{
			llmtest.Calls(llmtest.Call("c1", "lookup", `{"q":"1"}`)),
			llmtest.Calls(llmtest.Call("c2", "lookup", `{"q":"2"}`)),
			llmtest.Calls(llmtest.Call("c3", "lookup", `{"q":"3"}`)),
		}
		return llmtest.NewScripted(append(append(replies, compaction...), llmtest.Reply{Text: "Done."})...)
	}
	cases := []struct {
		name    string
		policy  agent.ContextPolicy
		model   *llmtest.Scripted
		metered string
	}{
		{"a custom summary prompt is what the model is asked",
			agent.ContextPolicy{KeepRecent: 2, CompactionPrompt: "Write the CRM notes for this chat."},
			script(llmtest.Reply{Text: "NOTES", Check: func(r *llm.Request) error {
				if got := r.Messages[len(r.Messages)-1].Text(); got != "Write the CRM notes for this chat." {
					return fmt.Errorf("compaction prompt = %q", got)
				}
				return nil
			}}),
			"turn,turn,turn,compaction,turn"},
		{"compaction turned off never summarises", agent.ContextPolicy{KeepRecent: 2, NoCompaction: true},
			script(), "turn,turn,turn,turn"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var purposes []string
			a, err := agent.New(agent.Config{
				Resolver: agent.Models(tc.model, 300, "small-window"), Tools: toolSet(t, bulky), Context: tc.policy,
				Hooks: agent.Hooks{OnTurnEnd: func(_ context.Context, info agent.TurnInfo) (bool, error) {
					purposes = append(purposes, info.Purpose)
					return true, nil
				}},
			})
			if err != nil {
				t.Fatal(err)
			}
			out, err := a.Send(context.Background(), &agent.State{}, "look up three things")
			if err != nil || out.Text != "Done." {
				t.Fatalf("outcome %+v, err %v", out, err)
			}
			if got := strings.Join(purposes, ","); got != tc.metered {
				t.Fatalf("metered %s, want %s", got, tc.metered)
			}
		})
	}
}
