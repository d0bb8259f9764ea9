package openai

import (
	"encoding/json"
	"testing"
)

// FuzzNormalizeArguments: whatever a model writes, the result is valid JSON
// (so the message can be stored), and valid JSON objects pass unchanged.
//
//	go test -run '^$' -fuzz FuzzNormalizeArguments -fuzztime 30s ./pkg/llm/openai
func FuzzNormalizeArguments(f *testing.F) {
	for _, seed := range []string{
		`{"city":"Paris"}`, `{"city": "Paris"`, `{'a': 1,}`, ``, `:::`, `{"a": [1, 2`,
		"```json\n{\"a\": 1}\n```", `{"a": "\u00e9"}`, `null`, `[1,2]`, `{"a":`, `"just a string"`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := normalizeArguments(raw)
		if !json.Valid(got) {
			t.Fatalf("normalizeArguments(%q) = %q, not valid JSON", raw, got)
		}
		var obj map[string]any
		if json.Valid([]byte(raw)) && json.Unmarshal([]byte(raw), &obj) == nil && obj != nil {
			if string(got) != trimmed(raw) {
				t.Fatalf("a valid object %q changed to %q", raw, got)
			}
		}
		_ = wireArguments(got) // and sending it back never panics
	})
}

func trimmed(s string) string {
	b := []byte(s)
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\n' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return string(b)
}
