package mcptool

import (
	"encoding/json"

	"github.com/xeipuuv/gojsonschema"
)

// permissiveSchema stands in for a server schema that cannot be used: the
// server still validates its own arguments.
var permissiveSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// normalizeSchema makes a server's input schema fit a tool definition: a
// JSON object schema with "type": "object" and "properties", without the
// "$schema" marker that some providers reject. A schema the argument
// validator in pkg/tool cannot compile is replaced by permissiveSchema, so one
// odd tool cannot break the whole tool set of a dialog; ok reports that.
func normalizeSchema(schema any) (out json.RawMessage, ok bool) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return permissiveSchema, false
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return permissiveSchema, schema == nil
	}
	delete(m, "$schema")
	m["type"] = "object"
	if _, has := m["properties"].(map[string]any); !has {
		m["properties"] = map[string]any{}
	}
	out, err = json.Marshal(m)
	if err != nil {
		return permissiveSchema, false
	}
	if _, err := gojsonschema.NewSchema(gojsonschema.NewBytesLoader(out)); err != nil {
		return permissiveSchema, false
	}
	return out, true
}
