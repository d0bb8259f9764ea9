package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/parleyhq/parley/pkg/llm"
)

// reservedExtra are body fields the provider owns; Request.Extra may not
// override them, or the conversation and the stream handling would disagree
// with what was sent.
var reservedExtra = map[string]bool{
	"model": true, "messages": true, "system": true, "stream": true, "tools": true,
	"tool_choice": true, "max_tokens": true, "thinking": true,
}

// toParams maps a neutral request onto the SDK's. maxTokens is the default
// for a request that names none; cache sets prompt-caching breakpoints.
func toParams(req *llm.Request, maxTokens int, cache bool) (sdk.MessageNewParams, error) {
	var out sdk.MessageNewParams
	if strings.TrimSpace(req.Model) == "" {
		return out, fmt.Errorf("the request names no model")
	}
	msgs, err := toMessages(req.Messages)
	if err != nil {
		return out, err
	}
	out.Model = sdk.Model(req.Model)
	out.Messages = msgs
	out.MaxTokens = int64(maxTokens)
	if req.MaxTokens > 0 {
		out.MaxTokens = int64(req.MaxTokens)
	}
	if req.System != "" {
		out.System = []sdk.TextBlockParam{{Text: req.System}}
		if cache {
			out.System[0].CacheControl = sdk.NewCacheControlEphemeralParam()
		}
	}
	if out.Tools, err = toTools(req.Tools, cache); err != nil {
		return out, err
	}
	if len(out.Tools) > 0 {
		out.ToolChoice = toToolChoice(req.ToolChoice, req.ParallelToolCalls)
	}
	if req.ThinkingBudget > 0 {
		if err := withThinking(&out, req.ThinkingBudget, maxTokens); err != nil {
			return out, err
		}
	} else if req.Temperature != nil {
		// Anthropic's range is 0 to 1, OpenAI's 0 to 2: a config written
		// for one should not break the other.
		out.Temperature = sdk.Float(min(max(*req.Temperature, 0), 1))
	}
	if len(req.Extra) > 0 {
		for k := range req.Extra {
			if reservedExtra[k] {
				return out, fmt.Errorf("extra field %q is set by the provider and cannot be overridden", k)
			}
		}
		out.SetExtraFields(req.Extra)
	}
	return out, nil
}

// withThinking turns extended thinking on. The API wants max_tokens above
// the budget, no temperature, and no forced tool choice.
func withThinking(out *sdk.MessageNewParams, budget, answer int) error {
	if out.ToolChoice.OfAny != nil || out.ToolChoice.OfTool != nil {
		return fmt.Errorf("extended thinking cannot be combined with a tool choice that forces a tool call")
	}
	out.Thinking = sdk.ThinkingConfigParamOfEnabled(int64(budget))
	if out.MaxTokens <= int64(budget) {
		out.MaxTokens = int64(budget + answer)
	}
	return nil
}

// toMessages maps the conversation. The API wants alternating user and
// assistant messages, so a run of tool results, and user text after them,
// becomes one user message whose tool_result blocks come first.
func toMessages(msgs []llm.Message) ([]sdk.MessageParam, error) {
	out := make([]sdk.MessageParam, 0, len(msgs))
	for i, m := range msgs {
		var role sdk.MessageParamRole
		var blocks []sdk.ContentBlockParamUnion
		switch m.Role {
		case llm.RoleUser:
			role = sdk.MessageParamRoleUser
			if t := m.Text(); t != "" {
				blocks = append(blocks, sdk.NewTextBlock(t))
			}
			for _, img := range m.Images() {
				blocks = append(blocks, sdk.NewImageBlockBase64(img.MediaType, base64.StdEncoding.EncodeToString(img.Data)))
			}
		case llm.RoleAssistant:
			role, blocks = sdk.MessageParamRoleAssistant, assistantBlocks(m)
		case llm.RoleTool:
			r := m.ToolResult()
			if r == nil {
				return nil, fmt.Errorf("messages[%d]: a tool message holds no tool result", i)
			}
			role, blocks = sdk.MessageParamRoleUser, []sdk.ContentBlockParamUnion{toolResult(r)}
		default:
			return nil, fmt.Errorf("messages[%d]: unknown role %q", i, m.Role)
		}
		if len(blocks) == 0 {
			continue // an empty message carries nothing, and the API rejects it
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			continue
		}
		out = append(out, sdk.MessageParam{Role: role, Content: blocks})
	}
	return out, nil
}

// assistantBlocks keeps thinking first, as the model wrote it, then text and
// tool uses in order. Thinking from another provider kind cannot be verified
// by this one and is dropped.
func assistantBlocks(m llm.Message) []sdk.ContentBlockParamUnion {
	var blocks []sdk.ContentBlockParamUnion
	for _, b := range m.Content {
		switch {
		case b.Type == llm.BlockThinking && b.Thinking != nil && b.Thinking.Provider == Kind:
			if b.Thinking.Redacted != "" {
				blocks = append(blocks, sdk.NewRedactedThinkingBlock(b.Thinking.Redacted))
			} else if b.Thinking.Signature != "" {
				blocks = append(blocks, sdk.NewThinkingBlock(b.Thinking.Signature, b.Thinking.Text))
			}
		case b.Type == llm.BlockText && b.Text != "":
			blocks = append(blocks, sdk.NewTextBlock(b.Text))
		case b.Type == llm.BlockToolUse && b.ToolUse != nil:
			blocks = append(blocks, sdk.NewToolUseBlock(b.ToolUse.ID, toolInput(b.ToolUse.Arguments), b.ToolUse.Name))
		}
	}
	return blocks
}

// toolInput is the tool use's arguments as the JSON object the API insists
// on; arguments that never parsed (the loop told the model so) become {}.
func toolInput(args json.RawMessage) any {
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || obj == nil {
		return map[string]any{}
	}
	return json.RawMessage(args)
}

func toolResult(r *llm.ToolResult) sdk.ContentBlockParamUnion {
	block := sdk.ToolResultBlockParam{ToolUseID: r.ToolUseID}
	if r.Content != "" {
		block.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: r.Content}}}
	}
	if r.IsError {
		block.IsError = sdk.Bool(true)
	}
	return sdk.ContentBlockParamUnion{OfToolResult: &block}
}

// toTools maps tool definitions; with cache set, the last one carries a
// breakpoint so the whole tool list is cached. A strict definition (the
// config's llm.strict_tools) is sent with strict: true and its schema
// fitted to what strict tool use accepts.
func toTools(defs []llm.ToolDefinition, cache bool) ([]sdk.ToolUnionParam, error) {
	out := make([]sdk.ToolUnionParam, 0, len(defs))
	for _, d := range defs {
		params := d.Parameters
		if d.Strict {
			var err error
			if params, err = strictSchema(params); err != nil {
				return nil, fmt.Errorf("tool %q: %w", d.Name, err)
			}
		}
		schema, err := inputSchema(params)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", d.Name, err)
		}
		t := sdk.ToolParam{Name: d.Name, InputSchema: schema}
		if d.Description != "" {
			t.Description = sdk.String(d.Description)
		}
		if d.Strict {
			// Strict tool use: the model's input always matches the schema.
			t.Strict = sdk.Bool(true)
		}
		out = append(out, sdk.ToolUnionParam{OfTool: &t})
	}
	if cache && len(out) > 0 {
		out[len(out)-1].OfTool.CacheControl = sdk.NewCacheControlEphemeralParam()
	}
	return out, nil
}

// inputSchema splits a JSON Schema into the SDK's fields; keywords it does
// not name travel as extra fields.
func inputSchema(raw json.RawMessage) (sdk.ToolInputSchemaParam, error) {
	var s sdk.ToolInputSchemaParam
	if len(raw) == 0 || string(raw) == "null" {
		s.Properties = map[string]any{}
		return s, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return s, fmt.Errorf("the parameters are not a JSON object")
	}
	extra := map[string]any{}
	for k, v := range fields {
		switch k {
		case "type":
		case "properties":
			s.Properties = v
		case "required":
			if err := json.Unmarshal(v, &s.Required); err != nil {
				return s, fmt.Errorf("required is not a list of names")
			}
		default:
			extra[k] = v
		}
	}
	if s.Properties == nil {
		s.Properties = map[string]any{}
	}
	if len(extra) > 0 {
		s.ExtraFields = extra
	}
	return s, nil
}

// toToolChoice maps "auto", "none", "required" or a tool's name.
func toToolChoice(choice string, parallel *bool) sdk.ToolChoiceUnionParam {
	var disable *bool
	if parallel != nil && !*parallel {
		t := true
		disable = &t
	}
	opt := func() (o sdk.ToolChoiceAutoParam) {
		if disable != nil {
			o.DisableParallelToolUse = sdk.Bool(true)
		}
		return o
	}
	switch choice {
	case "none":
		return sdk.ToolChoiceUnionParam{OfNone: &sdk.ToolChoiceNoneParam{}}
	case "required":
		any := sdk.ToolChoiceAnyParam{DisableParallelToolUse: opt().DisableParallelToolUse}
		return sdk.ToolChoiceUnionParam{OfAny: &any}
	case "", "auto":
		if disable == nil {
			return sdk.ToolChoiceUnionParam{}
		}
		auto := opt()
		return sdk.ToolChoiceUnionParam{OfAuto: &auto}
	default:
		tool := sdk.ToolChoiceToolParam{Name: choice, DisableParallelToolUse: opt().DisableParallelToolUse}
		return sdk.ToolChoiceUnionParam{OfTool: &tool}
	}
}

// fromMessage maps the API's reply back to a neutral response.
func fromMessage(m *sdk.Message) *llm.Response {
	msg := llm.Message{Role: llm.RoleAssistant}
	for _, b := range m.Content {
		switch b.Type {
		case "thinking":
			msg.Content = append(msg.Content, llm.Block{Type: llm.BlockThinking,
				Thinking: &llm.Thinking{Text: b.Thinking, Signature: b.Signature, Provider: Kind}})
		case "redacted_thinking":
			msg.Content = append(msg.Content, llm.Block{Type: llm.BlockThinking,
				Thinking: &llm.Thinking{Redacted: b.Data, Provider: Kind}})
		case "text":
			if b.Text != "" {
				msg.Content = append(msg.Content, llm.Block{Type: llm.BlockText, Text: b.Text})
			}
		case "tool_use":
			args := json.RawMessage(b.Input)
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			msg.Content = append(msg.Content, llm.Block{Type: llm.BlockToolUse,
				ToolUse: &llm.ToolUse{ID: b.ID, Name: b.Name, Arguments: args}})
		}
	}
	return &llm.Response{
		Message:    msg,
		StopReason: stopReason(m.StopReason),
		Usage:      usage(m.Usage),
		Model:      string(m.Model),
	}
}

func stopReason(r sdk.StopReason) llm.StopReason {
	switch r {
	case sdk.StopReasonToolUse:
		return llm.StopToolUse
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		return llm.StopMaxTokens
	case sdk.StopReasonRefusal:
		return llm.StopContentFilter
	default:
		return llm.StopEndTurn
	}
}

// usage counts cached prompt tokens as input too: the API's input_tokens
// are only those after the last cache breakpoint.
func usage(u sdk.Usage) llm.Usage {
	read, write := int(u.CacheReadInputTokens), int(u.CacheCreationInputTokens)
	return llm.Usage{
		InputTokens:      int(u.InputTokens) + read + write,
		OutputTokens:     int(u.OutputTokens),
		CacheReadTokens:  read,
		CacheWriteTokens: write,
	}
}
