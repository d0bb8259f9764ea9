package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// maxRefDepth bounds $ref inlining; deeper means a recursive schema.
const maxRefDepth = 16

// strictUnsupported are schema keywords OpenAI's strict mode refuses (or
// ignores) and that carry no meaning the model needs: the tool still
// validates its arguments against its own schema, constraints included.
var strictUnsupported = []string{
	"title", "default", "examples", "$schema", "$id", "$comment",
	"minLength", "maxLength", "patternProperties", "unevaluatedProperties", "propertyNames",
	"minProperties", "maxProperties", "unevaluatedItems", "contains", "minContains", "maxContains", "uniqueItems",
}

// StrictSchema prepares a tool's JSON Schema for OpenAI's strict mode
// (structured outputs), as the seed's SchemaOptimizer does: local $ref and
// $defs are inlined, titles and unsupported keywords dropped, descriptions
// kept, and every object gets additionalProperties false with all its
// properties required. A property that was optional becomes nullable
// instead, so the model can still leave it out by sending null; callers
// drop null members from the arguments (DropNulls) before validating them
// against the original schema. A recursive schema cannot be inlined and
// is an error: send that tool without strict mode.
func StrictSchema(schema json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		schema = EmptyObjectSchema()
	}
	var root any
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("llm: strict schema: %w", err)
	}
	obj, ok := root.(map[string]any)
	if !ok {
		return nil, errors.New("llm: strict schema: the schema is not an object")
	}
	defs := map[string]any{}
	for _, key := range []string{"$defs", "definitions"} {
		if d, ok := obj[key].(map[string]any); ok {
			for name, s := range d {
				defs["#/"+key+"/"+name] = s
			}
		}
	}
	out, err := strictNode(obj, defs, 0)
	if err != nil {
		return nil, err
	}
	m := out.(map[string]any)
	delete(m, "$defs")
	delete(m, "definitions")
	if _, ok := m["properties"]; !ok {
		m["properties"] = map[string]any{}
		m["required"] = []any{}
		m["additionalProperties"] = false
	}
	return json.Marshal(m)
}

// strictNode rewrites one schema, copying so the input is untouched.
func strictNode(node any, defs map[string]any, depth int) (any, error) {
	s, ok := node.(map[string]any)
	if !ok {
		return node, nil // true/false schemas and odd values pass through
	}
	if ref, ok := s["$ref"].(string); ok {
		target, found := defs[ref]
		if !found {
			return nil, fmt.Errorf("llm: strict schema: $ref %q is not a local definition", ref)
		}
		if depth >= maxRefDepth {
			return nil, fmt.Errorf("llm: strict schema: $ref %q is recursive", ref)
		}
		merged := map[string]any{}
		if t, ok := target.(map[string]any); ok {
			for k, v := range t {
				merged[k] = v
			}
		}
		if d, ok := s["description"]; ok { // the use site's words win
			merged["description"] = d
		}
		return strictNode(merged, defs, depth+1)
	}
	out := make(map[string]any, len(s)+2)
	for k, v := range s {
		if !slices.Contains(strictUnsupported, k) && k != "$defs" && k != "definitions" {
			out[k] = v
		}
	}
	for _, key := range []string{"items", "not"} {
		if sub, ok := out[key]; ok {
			v, err := strictNode(sub, defs, depth)
			if err != nil {
				return nil, err
			}
			out[key] = v
		}
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
		if list, ok := out[key].([]any); ok {
			conv := make([]any, len(list))
			for i, sub := range list {
				v, err := strictNode(sub, defs, depth)
				if err != nil {
					return nil, err
				}
				conv[i] = v
			}
			out[key] = conv
		}
	}
	if props, ok := out["properties"].(map[string]any); ok {
		return strictObject(out, props, defs, depth)
	}
	return out, nil
}

// strictObject requires every property, making the optional ones nullable.
func strictObject(out, props map[string]any, defs map[string]any, depth int) (any, error) {
	required := map[string]bool{}
	if list, ok := out["required"].([]any); ok {
		for _, r := range list {
			if name, ok := r.(string); ok {
				required[name] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	conv := make(map[string]any, len(props))
	for name, sub := range props {
		v, err := strictNode(sub, defs, depth)
		if err != nil {
			return nil, err
		}
		if !required[name] {
			v = nullable(v)
		}
		conv[name] = v
		names = append(names, name)
	}
	slices.Sort(names)
	all := make([]any, len(names))
	for i, n := range names {
		all[i] = n
	}
	out["properties"] = conv
	out["required"] = all
	out["additionalProperties"] = false
	return out, nil
}

// nullable lets a schema also accept null.
func nullable(node any) any {
	s, ok := node.(map[string]any)
	if !ok {
		return node
	}
	switch t := s["type"].(type) {
	case string:
		if t != "null" {
			s["type"] = []any{t, "null"}
		}
	case []any:
		if !slices.Contains(t, any("null")) {
			s["type"] = append(slices.Clone(t), "null")
		}
	default:
		return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
	}
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, nil) {
		s["enum"] = append(slices.Clone(enum), nil)
	}
	return s
}

// DropNulls removes the null members of every object in args, for a tool
// offered in strict mode: there a null stands for an argument the model
// left out. Anything that is not a JSON object is returned as is.
func DropNulls(args json.RawMessage) json.RawMessage {
	if !bytes.Contains(args, []byte("null")) {
		return args
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return args
	}
	if _, ok := v.(map[string]any); !ok {
		return args
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(dropNulls(v)); err != nil {
		return args
	}
	return json.RawMessage(strings.TrimSuffix(b.String(), "\n"))
}

func dropNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, sub := range t {
			if sub == nil {
				delete(t, k)
			} else {
				t[k] = dropNulls(sub)
			}
		}
	case []any:
		for i, sub := range t {
			t[i] = dropNulls(sub)
		}
	}
	return v
}
