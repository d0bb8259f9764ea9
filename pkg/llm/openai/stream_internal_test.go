package openai

import (
	"testing"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/parleyhq/parley/pkg/llm"
)

func toolChunk(index *int, id, name, args string) goopenai.ChatCompletionStreamResponse {
	return goopenai.ChatCompletionStreamResponse{Choices: []goopenai.ChatCompletionStreamChoice{{
		Delta: goopenai.ChatCompletionStreamChoiceDelta{ToolCalls: []goopenai.ToolCall{{
			Index: index, ID: id, Type: goopenai.ToolTypeFunction, Function: goopenai.FunctionCall{Name: name, Arguments: args},
		}}},
	}}}
}

func finishChunk(reason goopenai.FinishReason) goopenai.ChatCompletionStreamResponse {
	return goopenai.ChatCompletionStreamResponse{Choices: []goopenai.ChatCompletionStreamChoice{{FinishReason: reason}}}
}

func ptr(i int) *int { return &i }

// Servers differ in how they fragment tool calls; each case is one dialect.
func TestAssemblerUnderstandsServerDialects(t *testing.T) {
	type call struct{ id, name, args string }
	tests := []struct {
		name   string
		chunks []goopenai.ChatCompletionStreamResponse
		want   []call
		stop   llm.StopReason
	}{
		{"OpenAI: id and name first, arguments by index, calls interleaved",
			[]goopenai.ChatCompletionStreamResponse{
				toolChunk(ptr(0), "a", "f", ""), toolChunk(ptr(1), "b", "g", ""),
				toolChunk(ptr(0), "", "", `{"x":`), toolChunk(ptr(1), "", "", `{}`), toolChunk(ptr(0), "", "", `1}`),
				finishChunk("tool_calls")},
			[]call{{"a", "f", `{"x":1}`}, {"b", "g", `{}`}}, llm.StopToolUse},
		{"no index: an id starts a call, fragments without one continue it",
			[]goopenai.ChatCompletionStreamResponse{
				toolChunk(nil, "a", "f", `{"x"`), toolChunk(nil, "", "", `:1}`), toolChunk(nil, "b", "g", `{}`),
				finishChunk("tool_calls")},
			[]call{{"a", "f", `{"x":1}`}, {"b", "g", `{}`}}, llm.StopToolUse},
		{"the id and name repeated on every fragment are taken once",
			[]goopenai.ChatCompletionStreamResponse{
				toolChunk(ptr(0), "a", "f", `{"x"`), toolChunk(ptr(0), "a", "f", `:1}`), finishChunk("stop")},
			[]call{{"a", "f", `{"x":1}`}}, llm.StopToolUse},
		{"a whole call in one chunk with no id gets a positional one",
			[]goopenai.ChatCompletionStreamResponse{toolChunk(ptr(0), "", "f", `{"x":1}`), finishChunk("tool_calls")},
			[]call{{"call_0", "f", `{"x":1}`}}, llm.StopToolUse},
		{"a length stop without calls is max_tokens",
			[]goopenai.ChatCompletionStreamResponse{finishChunk("length")}, nil, llm.StopMaxTokens},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var deltas int
			a := newAssembler(func(d llm.Delta) { deltas++ })
			for _, c := range tt.chunks {
				a.add(c)
			}
			if !a.finished() {
				t.Fatal("a stream with a finish reason is not finished")
			}
			resp := a.response()
			uses := resp.Message.ToolUses()
			if len(uses) != len(tt.want) || resp.StopReason != tt.stop {
				t.Fatalf("got %d uses, stop %s; want %d, %s", len(uses), resp.StopReason, len(tt.want), tt.stop)
			}
			for i, w := range tt.want {
				if uses[i].ID != w.id || uses[i].Name != w.name || string(uses[i].Arguments) != w.args {
					t.Errorf("use %d = %+v; want %+v", i, uses[i], w)
				}
			}
			if len(tt.want) > 0 && deltas == 0 {
				t.Errorf("no deltas were emitted")
			}
		})
	}
}

func TestAssemblerWithoutAFinishReasonIsUnfinished(t *testing.T) {
	a := newAssembler(nil)
	a.add(toolChunk(ptr(0), "a", "f", `{"x":`))
	if a.finished() {
		t.Fatal("a stream that never said why it stopped counts as finished")
	}
}
