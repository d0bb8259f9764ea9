package llmtest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// anthropicToolName is the Messages API's rule for custom tool names.
var anthropicToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)

// maxCacheBreakpoints is how many cache_control blocks one request may hold.
const maxCacheBreakpoints = 4

// anthropicVersions are the anthropic-version header values the API accepts.
var anthropicVersions = map[string]bool{"2023-06-01": true, "2023-01-01": true}

// signThinking is the signature the fake gives a thinking block: a request
// that replays thinking must send it back unchanged, text and signature.
func signThinking(text string) string {
	sum := sha256.Sum256([]byte("llmtest-thinking:" + text))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// validateMessagesRequest applies the checks the Messages API makes before
// it runs a model, with its wording where it matters.
func validateMessagesRequest(r *MessagesRequest) *anthropicError {
	switch {
	case r.Model == "":
		return anthropicInvalid("model: Field required")
	case r.MaxTokens == nil:
		return anthropicInvalid("max_tokens: Field required")
	case *r.MaxTokens < 1:
		return anthropicInvalid("max_tokens: Input should be greater than or equal to 1")
	case r.Messages == nil:
		return anthropicInvalid("messages: Field required")
	case len(r.Messages) == 0:
		return anthropicInvalid("messages: at least one message is required")
	case r.Temperature != nil && (*r.Temperature < 0 || *r.Temperature > 1):
		return anthropicInvalid("temperature: Input should be less than or equal to 1")
	}
	for i, b := range r.System {
		if b.Type != "text" || b.Text == nil {
			return anthropicInvalid("system.%d.type: Input should be 'text'", i)
		}
	}
	if e := validateAnthropicTools(r); e != nil {
		return e
	}
	if e := validateThinkingConfig(r); e != nil {
		return e
	}
	if e := validateAnthropicMessages(r); e != nil {
		return e
	}
	if n := cacheBreakpoints(r); n > maxCacheBreakpoints {
		return anthropicInvalid("A maximum of %d blocks with cache_control may be provided. Found %d.", maxCacheBreakpoints, n)
	}
	return nil
}

func validateAnthropicTools(r *MessagesRequest) *anthropicError {
	seen := map[string]bool{}
	for i, t := range r.Tools {
		if t.Type != "" && t.Type != "custom" {
			return anthropicInvalid("tools.%d.type: Input tag '%s' found using 'type' does not match any of the expected tags", i, t.Type)
		}
		if !anthropicToolName.MatchString(t.Name) {
			return anthropicInvalid("tools.%d.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'", i)
		}
		if seen[t.Name] {
			return anthropicInvalid("tools: Tool names must be unique.")
		}
		seen[t.Name] = true
		var schema map[string]any
		if len(t.InputSchema) == 0 {
			return anthropicInvalid("tools.%d.custom.input_schema: Field required", i)
		}
		if json.Unmarshal(t.InputSchema, &schema) != nil || schema["type"] != "object" {
			return anthropicInvalid("tools.%d.custom.input_schema.type: Input should be 'object'", i)
		}
		if len(t.extra) > 0 {
			sort.Strings(t.extra)
			return anthropicInvalid("tools.%d.custom.%s: Extra inputs are not permitted", i, t.extra[0])
		}
		if t.Strict != nil && *t.Strict {
			if e := validateStrictSchema(fmt.Sprintf("tools.%d.custom.input_schema", i), schema); e != nil {
				return e
			}
		}
	}
	tc := r.ToolChoice
	if tc == nil {
		return nil
	}
	if len(r.Tools) == 0 {
		return anthropicInvalid("tool_choice: tool_choice may only be specified while providing tools.")
	}
	switch tc.Type {
	case "auto", "any", "none":
	case "tool":
		if !seen[tc.Name] {
			return anthropicInvalid("tool_choice.tool.name: Tool '%s' not found in the provided tools.", tc.Name)
		}
	default:
		return anthropicInvalid("tool_choice: Input tag '%s' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'", tc.Type)
	}
	return nil
}

func validateThinkingConfig(r *MessagesRequest) *anthropicError {
	if !thinkingOn(r) {
		return nil
	}
	t := r.Thinking
	switch {
	case t.BudgetTokens < 1024:
		return anthropicInvalid("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
	case *r.MaxTokens <= t.BudgetTokens:
		return anthropicInvalid("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size")
	case r.Temperature != nil && *r.Temperature != 1:
		return anthropicInvalid("`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#important-considerations-when-using-extended-thinking")
	case r.ToolChoice != nil && (r.ToolChoice.Type == "any" || r.ToolChoice.Type == "tool"):
		return anthropicInvalid("Thinking may not be enabled when tool_choice forces tool use.")
	}
	return nil
}

func thinkingOn(r *MessagesRequest) bool {
	return r.Thinking != nil && r.Thinking.Type == "enabled"
}

// validateAnthropicMessages checks roles, alternation, blocks, and that
// every tool_use is answered by a tool_result in the very next message and
// nowhere else.
func validateAnthropicMessages(r *MessagesRequest) *anthropicError {
	var pending map[string]bool // tool_use ids of the previous assistant message
	for i, m := range r.Messages {
		switch {
		case m.Role == "system":
			return anthropicInvalid("messages: Unexpected role \"system\". The Messages API accepts a top-level `system` parameter, not \"system\" as an input message role.")
		case m.Role != "user" && m.Role != "assistant":
			return anthropicInvalid("messages.%d.role: Input should be 'user' or 'assistant'", i)
		case i == 0 && m.Role != "user":
			return anthropicInvalid("messages.0.role: The first message must use the \"user\" role.")
		case i > 0 && r.Messages[i-1].Role == m.Role:
			return anthropicInvalid("messages: roles must alternate between \"user\" and \"assistant\", but found multiple %q roles in a row", m.Role)
		case m.empty && !(m.Role == "assistant" && i == len(r.Messages)-1):
			return anthropicInvalid("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}
		var e *anthropicError
		if m.Role == "user" {
			e = checkUserBlocks(i, m, pending)
			pending = nil
		} else {
			if len(pending) > 0 {
				return missingToolResultsAnthropic(i-1, pending)
			}
			pending, e = checkAssistantBlocks(i, m)
		}
		if e != nil {
			return e
		}
	}
	if len(pending) > 0 {
		return missingToolResultsAnthropic(len(r.Messages)-1, pending)
	}
	return checkThinkingReplay(r)
}

func checkUserBlocks(i int, m MessagesMessage, pending map[string]bool) *anthropicError {
	answered := map[string]bool{}
	others := false
	for j, b := range m.Content {
		switch b.Type {
		case "text":
			if e := checkText(i, j, b); e != nil {
				return e
			}
			others = true
		case "image":
			if e := checkImageBlock(i, j, b); e != nil {
				return e
			}
			others = true
		case "document":
			others = true
		case "tool_result":
			if !pending[b.ToolUseID] {
				return anthropicInvalid("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, b.ToolUseID)
			}
			if others {
				return anthropicInvalid("messages.%d.content.%d: `tool_result` blocks must come before any other content in a user message.", i, j)
			}
			if _, _, err := blocksOf(b.Content); err != nil {
				return anthropicInvalid("messages.%d.content.%d.tool_result.%v", i, j, err)
			}
			answered[b.ToolUseID] = true
		default:
			return anthropicInvalid("messages.%d.content.%d.type: `%s` blocks are not allowed in a user message", i, j, b.Type)
		}
	}
	missing := map[string]bool{}
	for id := range pending {
		if !answered[id] {
			missing[id] = true
		}
	}
	if len(missing) > 0 {
		return missingToolResultsAnthropic(i-1, missing)
	}
	return nil
}

func checkAssistantBlocks(i int, m MessagesMessage) (map[string]bool, *anthropicError) {
	uses := map[string]bool{}
	for j, b := range m.Content {
		switch b.Type {
		case "text":
			if e := checkText(i, j, b); e != nil {
				return nil, e
			}
		case "tool_use":
			var input map[string]any
			switch {
			case b.ID == "":
				return nil, anthropicInvalid("messages.%d.content.%d.tool_use.id: Field required", i, j)
			case uses[b.ID]:
				return nil, anthropicInvalid("messages.%d.content.%d: `tool_use` ids must be unique", i, j)
			case !anthropicToolName.MatchString(b.Name):
				return nil, anthropicInvalid("messages.%d.content.%d.tool_use.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'", i, j)
			case json.Unmarshal(b.Input, &input) != nil || input == nil:
				return nil, anthropicInvalid("messages.%d.content.%d.tool_use.input: Input should be a valid dictionary", i, j)
			}
			uses[b.ID] = true
		case "thinking":
			switch {
			case b.Signature == nil:
				return nil, anthropicInvalid("messages.%d.content.%d.thinking.signature: Field required", i, j)
			case b.Thinking == nil || *b.Signature != signThinking(*b.Thinking):
				return nil, anthropicInvalid("messages.%d.content.%d: Invalid `signature` in `thinking` block", i, j)
			}
		case "redacted_thinking":
			if b.Data == "" {
				return nil, anthropicInvalid("messages.%d.content.%d.redacted_thinking.data: Field required", i, j)
			}
		default:
			return nil, anthropicInvalid("messages.%d.content.%d.type: `%s` blocks are not allowed in an assistant message", i, j, b.Type)
		}
	}
	return uses, nil
}

func checkText(i, j int, b MessagesBlock) *anthropicError {
	if b.Text == nil || *b.Text == "" {
		return anthropicInvalid("messages.%d.content.%d.text: text content blocks must be non-empty", i, j)
	}
	return nil
}

func missingToolResultsAnthropic(i int, pending map[string]bool) *anthropicError {
	ids := make([]string, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return anthropicInvalid("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i, strings.Join(ids, ", "))
}

// checkThinkingReplay enforces, with thinking on, that the assistant message
// whose tool uses the conversation is still answering starts with its
// thinking: a client that drops thinking from the history breaks the loop.
func checkThinkingReplay(r *MessagesRequest) *anthropicError {
	if !thinkingOn(r) {
		return nil
	}
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role == "user" {
			if !hasToolResult(m) {
				return nil // a new user turn: earlier tool loops are closed
			}
			continue
		}
		if len(m.Content) > 0 && (m.Content[0].Type == "thinking" || m.Content[0].Type == "redacted_thinking") {
			return nil
		}
		found := "nothing"
		if len(m.Content) > 0 {
			found = "`" + m.Content[0].Type + "`"
		}
		return anthropicInvalid("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found %s. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns.", i, found)
	}
	return nil
}

func hasToolResult(m MessagesMessage) bool {
	for _, b := range m.Content {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}

// cacheBreakpoints counts blocks and tools marked with cache_control.
func cacheBreakpoints(r *MessagesRequest) int {
	n := 0
	for _, t := range r.Tools {
		if t.CacheControl != nil {
			n++
		}
	}
	for _, b := range r.System {
		if b.CacheControl != nil {
			n++
		}
	}
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.CacheControl != nil {
				n++
			}
		}
	}
	return n
}

// cachePrefixes returns, for each cache breakpoint in the order the API
// reads the prompt (tools, system, messages), the prompt up to and including
// it: a later request whose prompt starts the same way reads it from cache.
func cachePrefixes(r *MessagesRequest) []string {
	var out []string
	var b strings.Builder
	add := func(v any, marked bool) {
		j, _ := json.Marshal(v)
		b.Write(j)
		if marked {
			out = append(out, b.String())
		}
	}
	for _, t := range r.Tools {
		add(t, t.CacheControl != nil)
	}
	for _, s := range r.System {
		add(s, s.CacheControl != nil)
	}
	for _, m := range r.Messages {
		for _, blk := range m.Content {
			add(blk, blk.CacheControl != nil)
		}
	}
	return out
}
