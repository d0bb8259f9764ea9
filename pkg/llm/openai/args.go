package openai

import (
	"encoding/json"
	"strings"

	"github.com/kaptinlin/jsonrepair"
)

// normalizeArguments turns a model's argument text into JSON the loop can
// store and validate. Valid JSON is kept; malformed JSON (a truncated object,
// single quotes, a trailing comma) is repaired when that yields valid JSON;
// otherwise the raw text is kept as a JSON string, so schema validation
// rejects it with a readable "expected object" error the model can act on,
// and persisting the message never fails on invalid JSON.
func normalizeArguments(raw string) json.RawMessage {
	s := strings.TrimSpace(raw)
	if s == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	if fixed, err := jsonrepair.Repair(s); err == nil && json.Valid([]byte(fixed)) {
		return json.RawMessage(fixed)
	}
	quoted, _ := json.Marshal(raw)
	return quoted
}

// wireArguments is the inverse for history sent back to the model: a JSON
// string kept by normalizeArguments goes back as the text the model wrote.
func wireArguments(args json.RawMessage) string {
	s := strings.TrimSpace(string(args))
	if s == "" || s == "null" {
		return "{}"
	}
	if s[0] == '"' {
		var text string
		if json.Unmarshal([]byte(s), &text) == nil {
			return text
		}
	}
	return s
}
