package openai

import (
	"encoding/json"
	"fmt"
)

// mergeBody sets the patch's fields on the JSON object body.
func mergeBody(raw []byte, patch map[string]any) ([]byte, error) {
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, fmt.Errorf("request body is not a JSON object: %w", err)
	}
	for k, v := range patch {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("extra field %q: %w", k, err)
		}
		body[k] = b
	}
	return json.Marshal(body)
}
