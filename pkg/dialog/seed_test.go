package dialog_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/tool"
)

// weather is a tool a caller declares with its request.
var weather = tool.Definition{Name: "get_weather", Description: "Weather in a city",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}

func TestADialogSeededWithAnEarlierConversation(t *testing.T) {
	t.Parallel()
	call := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		{Type: llm.BlockToolUse, ToolUse: &llm.ToolUse{ID: "w1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}}}}
	cases := []struct {
		name    string
		history []agent.Message
		status  string
		pending []string
	}{
		{"ending with a reply is active", []agent.Message{
			{Kind: agent.KindUser, Message: llm.UserText("Hi")},
			{Kind: agent.KindAssistant, Message: llm.AssistantText("Hello")}}, dialog.DialogActive, nil},
		{"ending with tool calls is paused on them as client calls", []agent.Message{
			{Kind: agent.KindUser, Message: llm.UserText("Weather in Oslo?")},
			{Kind: agent.KindAssistant, Message: call}}, dialog.DialogPaused, []string{"w1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
				d, err := e.rt.Dialogs().Create(ctx, e.admin, "shop", "helper", dialog.CreateDialogInput{
					Context: map[string]string{"tier": "gold"}, Channel: "openai", History: tc.history})
				if err != nil {
					t.Fatal(err)
				}
				got, err := e.rt.Dialogs().Get(ctx, e.admin, "shop", d.ID, "")
				if err != nil {
					t.Fatal(err)
				}
				var pending []string
				for _, pc := range got.Pending {
					pending = append(pending, pc.ID)
				}
				if got.Status != tc.status || !slices.Equal(pending, tc.pending) || got.Channel != "openai" {
					t.Fatalf("dialog %+v", got.Dialog)
				}
				if len(got.Messages) != len(tc.history) {
					t.Fatalf("%d messages, want %d", len(got.Messages), len(tc.history))
				}
				for i, m := range got.Messages {
					if m.Seq != int64(i+1) || m.Kind != string(tc.history[i].Kind) || m.Version != 0 {
						t.Fatalf("message %d: %+v", i, m)
					}
				}
			})
		})
	}
}

func TestAPausedSeededDialogTakesTheCallersResultsAndTools(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		history := []agent.Message{
			{Kind: agent.KindUser, Message: llm.UserText("Weather in Oslo?")},
			{Kind: agent.KindAssistant, Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
				{Type: llm.BlockToolUse, ToolUse: &llm.ToolUse{ID: "w1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}}}}},
		}
		d, err := e.rt.Dialogs().Create(ctx, e.admin, "shop", "helper", dialog.CreateDialogInput{
			Context: map[string]string{"tier": "gold"}, History: history})
		if err != nil {
			t.Fatal(err)
		}
		e.llm.Enqueue(llmtest.ServerReply{Text: "Cold."})
		turn, err := e.rt.SubmitToolResults(ctx, e.admin, "shop", d.ID, dialog.ToolResultsInput{
			Results: []agent.ClientResult{{ID: "w1", Content: "-3"}}, ClientTools: []tool.Definition{weather}}, nil)
		if err != nil || turn.Done == nil || turn.Done.Text != "Cold." {
			t.Fatalf("turn %+v: %v", turn, err)
		}
		sent := e.llm.LastRequest()
		if !slices.Contains(sent.ToolNames(), "get_weather") || len(sent.Messages) != 4 || sent.Messages[3].Role != "tool" {
			t.Fatalf("the model got tools %v and %d messages", sent.ToolNames(), len(sent.Messages))
		}
	})
}

func TestAPrincipalNarrowedToABotReachesNoOtherBotsDialog(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		d := e.dialog(t)
		_, err := e.rt.SendMessage(ctx, e.admin.ForBot("bot_other"), "shop", d.ID, dialog.SendInput{Text: "hi"}, nil)
		var pe *platform.Error
		if !errors.As(err, &pe) || pe.Code != platform.CodeNotFound {
			t.Fatalf("err %v", err)
		}
		if n := len(e.llm.Requests()); n != 0 {
			t.Fatalf("the model was called %d times", n)
		}
	})
}
