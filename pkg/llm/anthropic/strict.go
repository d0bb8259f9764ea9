package anthropic

import (
	"encoding/json"
	"fmt"
	"slices"
)

// strictDropped are the JSON Schema keywords Anthropic's strict tool use
// does not take (the JSON Schema limitations of its structured outputs):
// numerical constraints, string constraints and array bounds past
// minItems 0 or 1. Dropping them loses nothing the tool relies on: it
// checks its arguments against its own schema, constraints included.
var strictDropped = []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
	"minLength", "maxLength", "pattern", "maxItems"}

// strictFormats are the string formats strict tool use supports.
var strictFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}

// strictSchema fits a tool's parameters, already prepared for strict mode
// (llm.StrictSchema: no $ref, every object closed), to what Anthropic's
// strict tool use accepts. It walks the schema by its keywords, so a
// property named like a keyword ("pattern") is kept.
func strictSchema(raw json.RawMessage) (json.RawMessage, error) {
	var schema any
	if err := json.Unmarshal(raw, &schema); err != nil {
		return nil, fmt.Errorf("the parameters are not JSON: %w", err)
	}
	return json.Marshal(strictNode(schema))
}

func strictNode(node any) any {
	m, ok := node.(map[string]any)
	if !ok {
		return node
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch {
		case slices.Contains(strictDropped, k):
		case k == "minItems" && !isZeroOrOne(v):
		case k == "format" && !slices.Contains(strictFormats, fmt.Sprint(v)):
		case k == "properties":
			props := map[string]any{}
			if pm, ok := v.(map[string]any); ok {
				for name, sub := range pm {
					props[name] = strictNode(sub)
				}
			}
			out[k] = props
		case k == "items" || k == "not" || k == "additionalProperties":
			out[k] = strictNode(v)
		case k == "anyOf" || k == "allOf" || k == "oneOf" || k == "prefixItems":
			if list, ok := v.([]any); ok {
				subs := make([]any, len(list))
				for i, sub := range list {
					subs[i] = strictNode(sub)
				}
				out[k] = subs
			} else {
				out[k] = v
			}
		default:
			out[k] = v
		}
	}
	return out
}

func isZeroOrOne(v any) bool {
	n, ok := v.(float64)
	return ok && (n == 0 || n == 1)
}
