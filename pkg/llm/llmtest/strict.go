package llmtest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/openai/wire"
)

var validRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true}

// validate applies the checks the real API makes before it runs a model, with
// its wording where it matters, so a client that passes here passes there.
func validate(r *ChatRequest) *apiError {
	if r.Model == "" {
		return invalidRequest("model", "you must provide a model parameter")
	}
	if len(r.Messages) == 0 {
		return invalidRequest("messages", "[] is too short - 'messages'")
	}
	if r.StreamOptions != nil && !r.Stream {
		return invalidRequest("stream_options", "The 'stream_options' parameter is only allowed when 'stream' is enabled.")
	}
	if r.ParallelToolCalls != nil && len(r.Tools) == 0 {
		return invalidRequest("parallel_tool_calls", "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified.")
	}
	if err := validateTools(r.Tools); err != nil {
		return err
	}
	return validateMessages(r.Messages)
}

func validateTools(tools []wire.Tool) *apiError {
	seen := map[string]bool{}
	for i, t := range tools {
		param := fmt.Sprintf("tools[%d].function.name", i)
		if t.Type != "function" {
			return invalidRequest(fmt.Sprintf("tools[%d].type", i), "Invalid value: '%s'. Supported values are: 'function'.", t.Type)
		}
		name := t.Function.Name
		if !llm.ValidToolName(name) {
			return invalidRequest(param, "Invalid '%s': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$' and is at most 64 characters long.", param)
		}
		if seen[name] {
			return invalidRequest("tools", "Duplicate function name: '%s'. Function names must be unique within a request.", name)
		}
		seen[name] = true
		if err := validateSchema(name, t.Function.Parameters, fmt.Sprintf("tools[%d].function.parameters", i)); err != nil {
			return err
		}
	}
	return nil
}

// validateSchema checks the shape the API insists on: parameters, when given,
// is a JSON object schema of type "object".
func validateSchema(name string, raw json.RawMessage, param string) *apiError {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		return invalidRequest(param, "Invalid schema for function '%s': schema must be a JSON object.", name)
	}
	if t, ok := schema["type"]; ok && t != "object" {
		return invalidRequest(param, "Invalid schema for function '%s': schema must be a JSON Schema of 'type: \"object\"', got 'type: \"%v\"'.", name, t)
	}
	if p, ok := schema["properties"]; ok {
		if _, isObject := p.(map[string]any); !isObject {
			return invalidRequest(param, "Invalid schema for function '%s': 'properties' must be an object.", name)
		}
	}
	if req, ok := schema["required"]; ok {
		if _, isArray := req.([]any); !isArray {
			return invalidRequest(param, "Invalid schema for function '%s': 'required' must be an array.", name)
		}
	}
	return nil
}

// validateMessages walks the conversation keeping the tool calls of the last
// assistant message that no tool message has answered yet.
func validateMessages(msgs []ChatMessage) *apiError {
	pending := map[string]bool{}
	pendingFrom := -1
	for i, m := range msgs {
		if !validRoles[m.Role] {
			return invalidRequest(fmt.Sprintf("messages[%d].role", i), "Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'tool', and 'developer'.", m.Role)
		}
		if _, err := contentText(m.Content); err != nil {
			return invalidRequest(fmt.Sprintf("messages[%d].content", i), "Invalid 'messages[%d].content': %v.", i, err)
		}
		if err := checkParts(i, m); err != nil {
			return err
		}
		if noContent(m.Content) && (m.Role != "assistant" || len(m.ToolCalls) == 0) {
			return invalidRequest(fmt.Sprintf("messages[%d].content", i), "Missing required parameter: 'messages[%d].content'.", i)
		}
		if m.Role == "tool" {
			if !pending[m.ToolCallID] {
				return invalidRequest(fmt.Sprintf("messages.[%d].role", i), "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
			}
			delete(pending, m.ToolCallID)
			continue
		}
		if len(pending) > 0 {
			return missingToolResults(pendingFrom, pending)
		}
		if m.Role == "assistant" {
			if err := checkAssistantCalls(i, m); err != nil {
				return err
			}
			for _, c := range m.ToolCalls {
				pending[c.ID] = true
			}
			pendingFrom = i
		}
	}
	if len(pending) > 0 {
		return missingToolResults(pendingFrom, pending)
	}
	return nil
}

func checkAssistantCalls(i int, m ChatMessage) *apiError {
	seen := map[string]bool{}
	for j, c := range m.ToolCalls {
		param := fmt.Sprintf("messages[%d].tool_calls[%d]", i, j)
		switch {
		case c.ID == "":
			return invalidRequest(param+".id", "Missing required parameter: '%s.id'.", param)
		case c.Type != "function":
			return invalidRequest(param+".type", "Missing required parameter: '%s.type'.", param)
		case c.Function.Name == "":
			return invalidRequest(param+".function.name", "Missing required parameter: '%s.function.name'.", param)
		case seen[c.ID]:
			return invalidRequest(param+".id", "Duplicate tool_call id '%s' in one assistant message.", c.ID)
		}
		seen[c.ID] = true
	}
	return nil
}

func missingToolResults(from int, pending map[string]bool) *apiError {
	ids := make([]string, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return invalidRequest(fmt.Sprintf("messages.[%d].role", from),
		"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s",
		strings.Join(ids, ", "))
}

// noContent reports an absent or null content; only an assistant message
// carrying tool calls may go without.
func noContent(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}
