package anthropic

import (
	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/parleyhq/parley/pkg/llm"
)

// assembler builds the reply from stream events with the SDK's own
// accumulator, passing each fragment on as it comes.
type assembler struct {
	onDelta func(llm.Delta)
	msg     sdk.Message
	// started is set once the reply has begun; stopped once message_stop
	// said it is whole.
	started, stopped bool
	// tools numbers the tool uses of the reply, as llm.Delta.Index counts
	// tool calls, not content blocks.
	tools map[int64]int
}

func (a *assembler) add(ev sdk.MessageStreamEventUnion) error {
	if err := a.msg.Accumulate(ev); err != nil {
		return err
	}
	switch ev.Type {
	case "message_start":
		a.started = true
	case "message_stop":
		a.stopped = true
	case "content_block_start":
		if ev.ContentBlock.Type == "tool_use" {
			if a.tools == nil {
				a.tools = map[int64]int{}
			}
			a.tools[ev.Index] = len(a.tools)
			a.emit(llm.Delta{Type: llm.DeltaToolCall, Index: a.tools[ev.Index], ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name})
		}
	case "content_block_delta":
		switch ev.Delta.Type {
		case "text_delta":
			a.emit(llm.Delta{Type: llm.DeltaText, Text: ev.Delta.Text})
		case "thinking_delta":
			a.emit(llm.Delta{Type: llm.DeltaThinking, Text: ev.Delta.Thinking})
		case "input_json_delta":
			if i, ok := a.tools[ev.Index]; ok && ev.Delta.PartialJSON != "" {
				a.emit(llm.Delta{Type: llm.DeltaToolCall, Index: i, Arguments: ev.Delta.PartialJSON})
			}
		}
	}
	return nil
}

func (a *assembler) emit(d llm.Delta) {
	if a.onDelta != nil && (d.Text != "" || d.Type == llm.DeltaToolCall) {
		a.onDelta(d)
	}
}
