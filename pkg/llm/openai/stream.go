package openai

import (
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/parleyhq/parley/pkg/llm"
)

// assembler rebuilds one assistant message from stream chunks. Tool calls
// arrive as fragments keyed by index: the first carries the id and name, the
// rest carry pieces of the argument text.
type assembler struct {
	onDelta func(llm.Delta)
	text    strings.Builder
	calls   []*partialCall
	byIndex map[int]*partialCall
	finish  string
	usage   llm.Usage
	model   string
}

type partialCall struct {
	pos      int // position in the message, which Delta.Index reports
	id, name string
	args     strings.Builder
}

func newAssembler(onDelta func(llm.Delta)) *assembler {
	if onDelta == nil {
		onDelta = func(llm.Delta) {}
	}
	return &assembler{onDelta: onDelta, byIndex: map[int]*partialCall{}}
}

func (a *assembler) add(chunk goopenai.ChatCompletionStreamResponse) {
	if chunk.Model != "" {
		a.model = chunk.Model
	}
	if chunk.Usage != nil {
		a.usage = llm.Usage{InputTokens: chunk.Usage.PromptTokens, OutputTokens: chunk.Usage.CompletionTokens}
	}
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue // only one choice is ever requested
		}
		if ch.Delta.Content != "" {
			a.text.WriteString(ch.Delta.Content)
			a.onDelta(llm.Delta{Type: llm.DeltaText, Text: ch.Delta.Content})
		}
		for _, tc := range ch.Delta.ToolCalls {
			a.addToolCall(tc)
		}
		if ch.FinishReason != "" {
			a.finish = string(ch.FinishReason)
		}
	}
}

func (a *assembler) addToolCall(tc goopenai.ToolCall) {
	pc := a.callFor(tc)
	d := llm.Delta{Type: llm.DeltaToolCall, Index: pc.pos, Arguments: tc.Function.Arguments}
	if pc.id == "" && tc.ID != "" {
		pc.id, d.ID = tc.ID, tc.ID
	}
	if pc.name == "" && tc.Function.Name != "" {
		pc.name, d.Name = tc.Function.Name, tc.Function.Name
	}
	pc.args.WriteString(tc.Function.Arguments)
	if d.ID != "" || d.Name != "" || d.Arguments != "" {
		a.onDelta(d)
	}
}

// callFor finds the call a fragment belongs to. Servers that omit the index
// start a new call with an id and continue the last one without.
func (a *assembler) callFor(tc goopenai.ToolCall) *partialCall {
	index := -1
	if tc.Index != nil {
		index = *tc.Index
	} else if tc.ID == "" && len(a.calls) > 0 {
		return a.calls[len(a.calls)-1]
	}
	if pc, ok := a.byIndex[index]; ok && index >= 0 {
		return pc
	}
	pc := &partialCall{pos: len(a.calls)}
	a.calls = append(a.calls, pc)
	if index >= 0 {
		a.byIndex[index] = pc
	}
	return pc
}

// finished reports whether the server said why the model stopped; a stream
// that ends without saying so was cut off.
func (a *assembler) finished() bool { return a.finish != "" }

func (a *assembler) response() *llm.Response {
	msg := llm.Message{Role: llm.RoleAssistant}
	if a.text.Len() > 0 {
		msg.Content = append(msg.Content, llm.Block{Type: llm.BlockText, Text: a.text.String()})
	}
	for i, pc := range a.calls {
		msg.Content = append(msg.Content, toolUseBlock(i, pc.id, pc.name, pc.args.String()))
	}
	return &llm.Response{
		Message:    msg,
		StopReason: stopReason(a.finish, len(a.calls) > 0),
		Usage:      a.usage,
		Model:      a.model,
	}
}
