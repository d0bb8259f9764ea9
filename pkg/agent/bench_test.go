package agent_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/tool"
)

// history returns n stored messages shaped like a real dialog: questions,
// tool calls with their results, answers.
func history(n int) []agent.Message {
	msgs := make([]agent.Message, 0, n+16)
	for i := 0; len(msgs) < n; i++ {
		id := fmt.Sprintf("h%d", i)
		msgs = append(msgs,
			agent.Message{Kind: agent.KindUser, Message: llm.UserText("Where is my order number 12345? It was due last week.")},
			agent.Message{Kind: agent.KindAssistant, Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolUse,
				ToolUse: &llm.ToolUse{ID: id, Name: "t0", Arguments: []byte(`{"q":"12345"}`)}}}}},
			agent.Message{Kind: agent.KindToolResult, Message: llm.ToolResultMessage(llm.ToolResult{ToolUseID: id, Name: "t0",
				Content: `{"order":"12345","status":"shipped","carrier":"UPS","eta":"tomorrow"}`})},
			agent.Message{Kind: agent.KindAssistant, Message: llm.AssistantText("Your order shipped with UPS and arrives tomorrow.")},
		)
	}
	return msgs[: n : n+16]
}

func benchTools(b *testing.B, n int) *tool.Set {
	tools := make([]tool.Tool, n)
	for i := range tools {
		tools[i] = echo(fmt.Sprintf("t%d", i))
	}
	return toolSet(b, tools...)
}

// benchTurns measures whole runs of turnsPerRun model calls over a dialog of
// size messages and reports the loop's cost per turn.
func benchTurns(b *testing.B, size, tools int, replies []llmtest.Reply, turnsPerRun int) {
	model := llmtest.NewScripted(replies...)
	model.Cycle, model.SkipRecording = true, true
	a, err := agent.New(agent.Config{Resolver: agent.Models(model, 128000, "bench"), Tools: benchTools(b, tools), System: "You are a bench bot."})
	if err != nil {
		b.Fatal(err)
	}
	base := history(size)
	st := &agent.State{}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		st.Messages = base[:size:cap(base)]
		if _, err := a.Send(ctx, st, "and my other order?"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*turnsPerRun), "ns/turn")
}

func BenchmarkTurnPlainAnswer(b *testing.B) {
	for _, size := range []int{10, 100, 1000} {
		for _, tools := range []int{1, 10, 50} {
			b.Run(fmt.Sprintf("history=%d/tools=%d", size, tools), func(b *testing.B) {
				benchTurns(b, size, tools, []llmtest.Reply{llmtest.Text("It ships tomorrow.")}, 1)
			})
		}
	}
}

func BenchmarkTurnWithToolCall(b *testing.B) {
	for _, size := range []int{10, 100, 1000} {
		for _, tools := range []int{1, 10, 50} {
			b.Run(fmt.Sprintf("history=%d/tools=%d", size, tools), func(b *testing.B) {
				replies := []llmtest.Reply{
					llmtest.Calls(llmtest.Call("", "t0", `{"q":"67890"}`)),
					llmtest.Text("That one ships tomorrow too."),
				}
				benchTurns(b, size, tools, replies, 2)
			})
		}
	}
}
