package dialog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/llm"
)

// An end user never sees the model's thinking: neither its stream events
// nor the thinking blocks of a stored reply. Other callers see both.
func TestEndUsersNeverSeeTheModelsThinking(t *testing.T) {
	t.Parallel()
	reply := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		{Type: llm.BlockThinking, Thinking: &llm.Thinking{Text: "the prompt says to upsell", Signature: "sig", Provider: "anthropic"}},
		{Type: llm.BlockText, Text: "Here you go."},
	}}
	content, _ := json.Marshal(reply.Content)
	m := Message{Kind: "assistant", Role: "assistant", Content: content, Text: "Here you go."}

	var got []agent.Event
	sink := (&endUserView{}).sink(agent.SinkFunc(func(e agent.Event) { got = append(got, e) }))
	sink.Send(agent.ThinkingDelta{Text: "the prompt says"})
	sink.Send(MessageEvent{Message: m})
	sink.(viewSink).SendAll([]agent.Event{agent.ThinkingDelta{Text: "more"}, agent.TextDelta{Text: "Here"}})
	if len(got) != 2 || got[0].Type() != "message" || got[1].Type() != "text_delta" {
		t.Fatalf("an end user got %v", got)
	}
	shown, _ := json.Marshal(got[0])
	if strings.Contains(string(shown), "upsell") || !strings.Contains(string(shown), "Here you go.") {
		t.Fatalf("an end user's message: %s", shown)
	}

	var all []agent.Event
	var nobody *endUserView
	nobody.sink(agent.SinkFunc(func(e agent.Event) { all = append(all, e) })).Send(agent.ThinkingDelta{Text: "x"})
	if len(all) != 1 || nobody.message(m).Text != m.Text || !strings.Contains(string(nobody.message(m).Content), "upsell") {
		t.Fatalf("an admin lost the thinking: %v", all)
	}
}
