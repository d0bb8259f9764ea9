package botconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// bodyKind says what a body node is.
type bodyKind uint8

const (
	bodyLiteral bodyKind = iota // number, bool or null, copied as written
	bodyString                  // a template string
	bodyObject
	bodyArray
)

// bodyNode is a parsed JSON body. Objects keep the author's key order so the
// rendered body reads like the config.
type bodyNode struct {
	kind   bodyKind
	raw    []byte      // bodyLiteral: the JSON text
	tmpl   strTemplate // bodyString
	keys   []string    // bodyObject: member names, in order
	values []*bodyNode // bodyObject members or bodyArray items
}

// parseBody parses the endpoint body, checking every string as a template.
func parseBody(raw json.RawMessage, sc scope, at string, ps *Problems) *bodyNode {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := parseBodyValue(dec, sc, at, "", ps)
	if err != nil {
		ps.add(at, "body is not valid JSON: %v", err)
		return nil
	}
	return n
}

// parseBodyValue reads one JSON value. key is the member name holding it ("" in
// arrays), which the autofill sentinel needs.
func parseBodyValue(dec *json.Decoder, sc scope, at, key string, ps *Problems) (*bodyNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return parseBodyObject(dec, sc, at, ps)
		}
		return parseBodyArray(dec, sc, at, ps)
	case string:
		return parseBodyString(v, sc, at, key, ps), nil
	case json.Number:
		return &bodyNode{kind: bodyLiteral, raw: []byte(v)}, nil
	case bool:
		return &bodyNode{kind: bodyLiteral, raw: []byte(fmt.Sprint(v))}, nil
	case nil:
		return &bodyNode{kind: bodyLiteral, raw: []byte("null")}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

func parseBodyObject(dec *json.Decoder, sc scope, at string, ps *Problems) (*bodyNode, error) {
	n := &bodyNode{kind: bodyObject}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		v, err := parseBodyValue(dec, sc, ptr(at, key), key, ps)
		if err != nil {
			return nil, err
		}
		n.keys = append(n.keys, key)
		n.values = append(n.values, v)
	}
	_, err := dec.Token() // '}'
	return n, err
}

func parseBodyArray(dec *json.Decoder, sc scope, at string, ps *Problems) (*bodyNode, error) {
	n := &bodyNode{kind: bodyArray}
	for i := 0; dec.More(); i++ {
		v, err := parseBodyValue(dec, sc, ptr(at, i), "", ps)
		if err != nil {
			return nil, err
		}
		n.values = append(n.values, v)
	}
	_, err := dec.Token() // ']'
	return n, err
}

func parseBodyString(s string, sc scope, at, key string, ps *Problems) *bodyNode {
	if s == AutofillSentinel {
		if key == "" {
			ps.add(at, "%q needs an object key naming the variable to fill; in arrays write {{variable}}", AutofillSentinel)
			return nil
		}
		name, err := sentinelVariable(key, sc)
		if err != nil {
			ps.add(at, "%v", err)
			return nil
		}
		return &bodyNode{kind: bodyString, tmpl: strTemplate{{kind: segVar, text: name}}}
	}
	t, err := parseEndpointTemplate(s)
	if err != nil {
		ps.add(at, "%v", err)
		return nil
	}
	checkRefs(t, sc, at, ps, refBody)
	return &bodyNode{kind: bodyString, tmpl: t}
}

// render writes the node as JSON. A string that is exactly one placeholder
// takes the value's JSON type; in an object, such a member is left out when
// the value is absent, and in an array it becomes null.
func (n *bodyNode) render(w *bytes.Buffer, r *renderer) error {
	switch n.kind {
	case bodyLiteral:
		w.Write(n.raw)
	case bodyString:
		return n.renderString(w, r)
	case bodyArray:
		w.WriteByte('[')
		for i, v := range n.values {
			if i > 0 {
				w.WriteByte(',')
			}
			if v.absent(r) {
				w.WriteString("null")
				continue
			}
			if err := v.render(w, r); err != nil {
				return err
			}
		}
		w.WriteByte(']')
	case bodyObject:
		w.WriteByte('{')
		first := true
		for i, v := range n.values {
			if v.absent(r) {
				continue
			}
			if !first {
				w.WriteByte(',')
			}
			first = false
			writeJSONString(w, n.keys[i])
			w.WriteByte(':')
			if err := v.render(w, r); err != nil {
				return fmt.Errorf("%s: %w", n.keys[i], err)
			}
		}
		w.WriteByte('}')
	}
	return nil
}

func (n *bodyNode) renderString(w *bytes.Buffer, r *renderer) error {
	if seg, ok := n.tmpl.single(); ok {
		v, err := r.value(seg)
		if err != nil {
			return err
		}
		if seg.kind == segArg && v.present {
			w.Write(v.raw)
			return nil
		}
		writeJSONString(w, v.text)
		return nil
	}
	s, err := r.text(n.tmpl, nil)
	if err != nil {
		return err
	}
	writeJSONString(w, s)
	return nil
}

// absent reports whether n is a lone placeholder with no value, which removes
// its member from an object.
func (n *bodyNode) absent(r *renderer) bool {
	if n.kind != bodyString {
		return false
	}
	seg, ok := n.tmpl.single()
	if !ok {
		return false
	}
	v, err := r.value(seg)
	return err == nil && !v.present
}

// writeJSONString writes s as a JSON string without HTML escaping, so bodies
// carry "<" and "&" as written.
func writeJSONString(w *bytes.Buffer, s string) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // encoding a string cannot fail
	w.Truncate(w.Len() - 1) // Encode appends a newline
}
