package llmtest

import (
	"fmt"
	"slices"
	"sort"
)

// strictUnsupported are JSON Schema keywords strict tool use refuses: the
// limitations Anthropic documents for structured outputs (numerical and
// string constraints, array bounds past minItems 0 or 1).
var strictUnsupported = []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
	"minLength", "maxLength", "pattern", "maxItems", "patternProperties", "unevaluatedProperties",
	"propertyNames", "minProperties", "maxProperties", "contains", "uniqueItems"}

// strictFormats are the string formats strict tool use supports.
var strictFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}

// validateStrictSchema checks a strict tool's input_schema as the API does
// before it builds the tool's grammar: every object closed
// (additionalProperties false), only the supported keywords and formats,
// no external $ref. The wording is the fake's; the rules are the API's.
func validateStrictSchema(at string, node any) *anthropicError {
	m, ok := node.(map[string]any)
	if !ok {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		switch {
		case slices.Contains(strictUnsupported, k):
			return anthropicInvalid("%s: For 'strict' tools, the keyword '%s' is not supported", at, k)
		case k == "minItems" && v != float64(0) && v != float64(1):
			return anthropicInvalid("%s: For 'strict' tools, minItems must be 0 or 1", at)
		case k == "format" && !slices.Contains(strictFormats, fmt.Sprint(v)):
			return anthropicInvalid("%s: For 'strict' tools, the string format '%v' is not supported", at, v)
		case k == "$ref" && !isLocalRef(v):
			return anthropicInvalid("%s: For 'strict' tools, only local $ref ('#/...') is supported", at)
		}
	}
	if isObjectSchema(m) && m["additionalProperties"] != false {
		return anthropicInvalid("%s: For 'strict' tools, 'additionalProperties' must be set to false for object types", at)
	}
	if props, ok := m["properties"].(map[string]any); ok {
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if e := validateStrictSchema(at+".properties."+name, props[name]); e != nil {
				return e
			}
		}
	}
	for _, k := range []string{"items", "not"} {
		if e := validateStrictSchema(at+"."+k, m[k]); e != nil {
			return e
		}
	}
	for _, k := range []string{"anyOf", "allOf", "oneOf"} {
		list, _ := m[k].([]any)
		for i, sub := range list {
			if e := validateStrictSchema(fmt.Sprintf("%s.%s.%d", at, k, i), sub); e != nil {
				return e
			}
		}
	}
	for _, k := range []string{"$defs", "definitions"} {
		defs, _ := m[k].(map[string]any)
		for name, sub := range defs {
			if e := validateStrictSchema(at+"."+k+"."+name, sub); e != nil {
				return e
			}
		}
	}
	return nil
}

// isObjectSchema reports whether a schema describes objects: its type is
// or includes "object", or it lists properties.
func isObjectSchema(m map[string]any) bool {
	if _, ok := m["properties"]; ok {
		return true
	}
	switch t := m["type"].(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	return false
}

func isLocalRef(v any) bool {
	s, ok := v.(string)
	return ok && len(s) > 0 && s[0] == '#'
}
