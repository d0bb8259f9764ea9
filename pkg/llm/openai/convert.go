package openai

import (
	"fmt"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/parleyhq/parley/pkg/llm"
)

// reservedExtra are body fields the provider owns; Request.Extra may not
// override them, or the conversation and the stream handling would disagree
// with what was sent.
var reservedExtra = map[string]bool{
	"model": true, "messages": true, "stream": true, "stream_options": true,
	"tools": true, "tool_choice": true, "n": true,
}

// toChatRequest maps a neutral request onto go-openai's, and returns the
// fields go-openai cannot express, to be merged into the body.
func toChatRequest(req *llm.Request) (*goopenai.ChatCompletionRequest, map[string]any, error) {
	out := &goopenai.ChatCompletionRequest{Model: req.Model}
	if strings.TrimSpace(req.Model) == "" {
		return out, nil, fmt.Errorf("the request names no model")
	}
	msgs, err := toMessages(req.System, req.Messages)
	if err != nil {
		return out, nil, err
	}
	out.Messages = msgs
	out.Tools = toTools(req.Tools)
	if len(out.Tools) > 0 {
		out.ToolChoice = toToolChoice(req.ToolChoice)
		if req.ParallelToolCalls != nil {
			out.ParallelToolCalls = *req.ParallelToolCalls
		}
	}
	patch := map[string]any{}
	reasoning := isReasoningModel(req.Model)
	switch {
	case req.Temperature == nil || reasoning:
		// Reasoning models reject any temperature; a bot config's default
		// should not make them unusable.
	case *req.Temperature == 0:
		patch["temperature"] = 0 // go-openai's omitempty would drop it
	default:
		out.Temperature = float32(*req.Temperature)
	}
	if reasoning {
		out.MaxCompletionTokens = req.MaxTokens
	} else {
		//lint:ignore SA1019 OpenAI-compatible servers (Ollama, vLLM, DeepSeek) know only max_tokens.
		out.MaxTokens = req.MaxTokens
	}
	for k, v := range req.Extra {
		if reservedExtra[k] {
			return out, nil, fmt.Errorf("extra field %q is set by the provider and cannot be overridden", k)
		}
		patch[k] = v
	}
	return out, patch, nil
}

// isReasoningModel matches OpenAI's reasoning families, which take
// max_completion_tokens instead of max_tokens and no temperature.
func isReasoningModel(model string) bool {
	m := strings.ToLower(model)
	for _, prefix := range []string{"o1", "o3", "o4", "gpt-5"} {
		if strings.HasPrefix(m, prefix) {
			return true
		}
	}
	return false
}

// toMessages puts the system prompt first, then each neutral message; a tool
// message becomes one "tool" message per result, answering by tool_call_id.
func toMessages(system string, msgs []llm.Message) ([]goopenai.ChatCompletionMessage, error) {
	out := make([]goopenai.ChatCompletionMessage, 0, len(msgs)+1)
	if system != "" {
		out = append(out, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleSystem, Content: system})
	}
	for i, m := range msgs {
		switch m.Role {
		case llm.RoleUser:
			out = append(out, toUser(m))
		case llm.RoleAssistant:
			if m.Text() == "" && len(m.ToolUses()) == 0 {
				continue // an empty reply carries nothing, and the API rejects it
			}
			out = append(out, toAssistant(m))
		case llm.RoleTool:
			results := toToolResults(m)
			if len(results) == 0 {
				return nil, fmt.Errorf("messages[%d]: a tool message holds no tool result", i)
			}
			out = append(out, results...)
		default:
			return nil, fmt.Errorf("messages[%d]: unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// toUser is a user message: its text, or with images, content parts (the
// text first, then each image as an image_url holding a data: URL).
func toUser(m llm.Message) goopenai.ChatCompletionMessage {
	images := m.Images()
	if len(images) == 0 {
		return goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser, Content: m.Text()}
	}
	var parts []goopenai.ChatMessagePart
	if t := m.Text(); t != "" {
		parts = append(parts, goopenai.ChatMessagePart{Type: goopenai.ChatMessagePartTypeText, Text: t})
	}
	for _, img := range images {
		parts = append(parts, goopenai.ChatMessagePart{Type: goopenai.ChatMessagePartTypeImageURL,
			ImageURL: &goopenai.ChatMessageImageURL{URL: img.DataURL()}})
	}
	return goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser, MultiContent: parts}
}

func toAssistant(m llm.Message) goopenai.ChatCompletionMessage {
	msg := goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleAssistant, Content: m.Text()}
	for _, u := range m.ToolUses() {
		msg.ToolCalls = append(msg.ToolCalls, goopenai.ToolCall{
			ID:       u.ID,
			Type:     goopenai.ToolTypeFunction,
			Function: goopenai.FunctionCall{Name: u.Name, Arguments: wireArguments(u.Arguments)},
		})
	}
	return msg
}

// toToolResults maps results; OpenAI has no error flag on tool messages, so
// a failed call says so in its text.
func toToolResults(m llm.Message) []goopenai.ChatCompletionMessage {
	var out []goopenai.ChatCompletionMessage
	for _, b := range m.Content {
		if b.Type != llm.BlockToolResult || b.ToolResult == nil {
			continue
		}
		content := b.ToolResult.Content
		if b.ToolResult.IsError && !strings.HasPrefix(strings.ToLower(content), "error") {
			content = "Error: " + content
		}
		if content == "" {
			content = "(no output)" // the API rejects a tool message without content
		}
		out = append(out, goopenai.ChatCompletionMessage{
			Role: goopenai.ChatMessageRoleTool, ToolCallID: b.ToolResult.ToolUseID, Content: content,
		})
	}
	return out
}

func toTools(defs []llm.ToolDefinition) []goopenai.Tool {
	if len(defs) == 0 {
		return nil
	}
	out := make([]goopenai.Tool, len(defs))
	for i, d := range defs {
		params := d.Parameters
		if len(params) == 0 {
			params = llm.EmptyObjectSchema()
		}
		out[i] = goopenai.Tool{Type: goopenai.ToolTypeFunction, Function: &goopenai.FunctionDefinition{
			Name: d.Name, Description: d.Description, Parameters: params, Strict: d.Strict,
		}}
	}
	return out
}

// toToolChoice passes "auto", "none" and "required" through; any other
// non-empty value names the one tool the model must call.
func toToolChoice(choice string) any {
	switch choice {
	case "":
		return nil
	case "auto", "none", "required":
		return choice
	default:
		return goopenai.ToolChoice{Type: goopenai.ToolTypeFunction, Function: goopenai.ToolFunction{Name: choice}}
	}
}

// fromChatResponse maps the first choice back to a neutral response.
func fromChatResponse(resp goopenai.ChatCompletionResponse) (*llm.Response, bool) {
	if len(resp.Choices) == 0 {
		return nil, false
	}
	ch := resp.Choices[0]
	msg := llm.Message{Role: llm.RoleAssistant}
	if ch.Message.Content != "" {
		msg.Content = append(msg.Content, llm.Block{Type: llm.BlockText, Text: ch.Message.Content})
	}
	for i, tc := range ch.Message.ToolCalls {
		msg.Content = append(msg.Content, toolUseBlock(i, tc.ID, tc.Function.Name, tc.Function.Arguments))
	}
	return &llm.Response{
		Message:    msg,
		StopReason: stopReason(string(ch.FinishReason), len(ch.Message.ToolCalls) > 0),
		Usage:      llm.Usage{InputTokens: resp.Usage.PromptTokens, OutputTokens: resp.Usage.CompletionTokens},
		Model:      resp.Model,
	}, true
}

// toolUseBlock builds a tool-use block; servers that send no call id (some
// local ones) get a positional one so results can still answer it.
func toolUseBlock(i int, id, name, args string) llm.Block {
	if id == "" {
		id = fmt.Sprintf("call_%d", i)
	}
	return llm.Block{Type: llm.BlockToolUse, ToolUse: &llm.ToolUse{ID: id, Name: name, Arguments: normalizeArguments(args)}}
}

// stopReason maps finish_reason; a reply with tool calls is a tool-use stop
// whatever the server said, as some servers report "stop" for it.
func stopReason(finish string, hasToolCalls bool) llm.StopReason {
	switch {
	case hasToolCalls:
		return llm.StopToolUse
	case finish == "length":
		return llm.StopMaxTokens
	case finish == "content_filter":
		return llm.StopContentFilter
	default:
		return llm.StopEndTurn
	}
}
