package mcptool_test

import (
	"encoding/json"
	"testing"

	"github.com/parleyhq/parley/pkg/tool/mcptool"
)

func TestInputSchemasAreNormalisedToObjects(t *testing.T) {
	cases := []struct {
		name   string
		schema any
		want   string
		wantOK bool
	}{
		{"a missing schema accepts any object", nil, `{"type":"object","properties":{}}`, true},
		{"a schema without type becomes an object schema", map[string]any{"properties": map[string]any{"q": map[string]any{"type": "string"}}},
			`{"properties":{"q":{"type":"string"}},"type":"object"}`, true},
		{"an object schema without properties gets empty ones", map[string]any{"type": "object"}, `{"properties":{},"type":"object"}`, true},
		{"the $schema marker is dropped", map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": map[string]any{}},
			`{"properties":{},"type":"object"}`, true},
		{"required and descriptions are kept", json.RawMessage(`{"type":"object","properties":{"a":{"type":"number","description":"first"}},"required":["a"]}`),
			`{"properties":{"a":{"description":"first","type":"number"}},"required":["a"],"type":"object"}`, true},
		{"a schema that is not an object is replaced", "string", `{"type":"object","properties":{}}`, false},
		{"a schema the validator cannot compile is replaced", map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": 12}}},
			`{"type":"object","properties":{}}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := mcptool.NormalizeSchema(tc.schema)
			if string(got) != tc.want || ok != tc.wantOK {
				t.Errorf("NormalizeSchema = %s, %v; want %s, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
