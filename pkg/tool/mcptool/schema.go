package mcptool

import (
	"context"
	"encoding/json"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/tool"
)

// permissiveSchema stands in for a server schema that cannot be used: the
// server still validates its own arguments.
func permissiveSchema() json.RawMessage { return llm.EmptyObjectSchema() }

// normalizeSchema makes a server's input schema fit a tool definition: a
// JSON object schema with "type": "object" and "properties", without the
// "$schema" marker that some providers reject.
//
// A schema that pkg/tool would refuse is replaced by permissiveSchema(), so one
// odd tool cannot break the whole tool set of a dialog; ok reports that. The
// check is pkg/tool's own (tool.NewSet): it refuses references outside the
// schema before compiling, because the schema library would fetch a remote
// $ref itself, past pkg/outbound, letting a server make Parley request
// internal addresses.
func normalizeSchema(schema any) (out json.RawMessage, ok bool) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return permissiveSchema(), false
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return permissiveSchema(), schema == nil
	}
	delete(m, "$schema")
	m["type"] = "object"
	if _, has := m["properties"].(map[string]any); !has {
		m["properties"] = map[string]any{}
	}
	out, err = json.Marshal(m)
	if err != nil {
		return permissiveSchema(), false
	}
	if _, err := tool.NewSet(nil, schemaProbe(out)); err != nil {
		return permissiveSchema(), false
	}
	return out, true
}

// schemaProbe is a tool that exists only to have its schema checked.
type schemaProbe json.RawMessage

func (p schemaProbe) Definition() tool.Definition {
	return tool.Definition{Name: "probe", Parameters: json.RawMessage(p)}
}

func (schemaProbe) Call(context.Context, json.RawMessage) (tool.Result, error) {
	return tool.Result{}, nil
}
