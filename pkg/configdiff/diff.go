package configdiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Change is one difference at a JSON pointer.
type Change struct {
	// Op is "add", "remove" or "replace".
	Op      string          `json:"op"`
	Pointer string          `json:"pointer"`
	From    json.RawMessage `json:"from,omitempty"`
	To      json.RawMessage `json:"to,omitempty"`
}

// Diff is what changed between two documents.
type Diff struct {
	// Changes are sorted by pointer; empty when the documents are equal as JSON.
	Changes []Change `json:"changes"`
	// Unified is a unified diff of the pretty-printed documents; "" when
	// their pretty forms are equal.
	Unified string `json:"unified"`
}

// Compare diffs two JSON documents. Objects are compared key by key, arrays
// index by index, so a pointer always names the same place in both.
func Compare(from, to []byte, fromName, toName string) (Diff, error) {
	var a, b any
	if err := decode(from, &a); err != nil {
		return Diff{}, fmt.Errorf("%s: %w", fromName, err)
	}
	if err := decode(to, &b); err != nil {
		return Diff{}, fmt.Errorf("%s: %w", toName, err)
	}
	d := Diff{Changes: []Change{}}
	walk("", a, b, &d.Changes)
	sort.SliceStable(d.Changes, func(i, j int) bool { return d.Changes[i].Pointer < d.Changes[j].Pointer })
	d.Unified = Unified(pretty(a), pretty(b), fromName, toName)
	return d, nil
}

// decode reads JSON; numbers compare by value (0.3 equals 0.30). Empty
// input is null, so a missing document compares as absent.
func decode(data []byte, v *any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		*v = nil
		return nil
	}
	return json.Unmarshal(data, v)
}

func walk(ptr string, a, b any, out *[]Change) {
	am, aObj := a.(map[string]any)
	bm, bObj := b.(map[string]any)
	if aObj && bObj {
		for k, av := range am {
			if bv, ok := bm[k]; ok {
				walk(ptr+"/"+escape(k), av, bv, out)
			} else {
				*out = append(*out, Change{Op: "remove", Pointer: ptr + "/" + escape(k), From: raw(av)})
			}
		}
		for k, bv := range bm {
			if _, ok := am[k]; !ok {
				*out = append(*out, Change{Op: "add", Pointer: ptr + "/" + escape(k), To: raw(bv)})
			}
		}
		return
	}
	al, aArr := a.([]any)
	bl, bArr := b.([]any)
	if aArr && bArr {
		for i := 0; i < len(al) || i < len(bl); i++ {
			p := ptr + "/" + strconv.Itoa(i)
			switch {
			case i >= len(bl):
				*out = append(*out, Change{Op: "remove", Pointer: p, From: raw(al[i])})
			case i >= len(al):
				*out = append(*out, Change{Op: "add", Pointer: p, To: raw(bl[i])})
			default:
				walk(p, al[i], bl[i], out)
			}
		}
		return
	}
	ra, rb := raw(a), raw(b)
	if !bytes.Equal(ra, rb) {
		switch {
		case a == nil && ptr == "":
			*out = append(*out, Change{Op: "add", Pointer: ptr, To: rb})
		case b == nil && ptr == "":
			*out = append(*out, Change{Op: "remove", Pointer: ptr, From: ra})
		default:
			*out = append(*out, Change{Op: "replace", Pointer: ptr, From: ra, To: rb})
		}
	}
}

func raw(v any) json.RawMessage {
	return bytes.TrimSuffix(marshal(v, ""), []byte("\n"))
}

func pretty(v any) string {
	if v == nil {
		return ""
	}
	return string(marshal(v, "  "))
}

// marshal writes v as JSON (indented by indent, when set) with a final
// newline. Diffs are read by people: &, < and > stay as written, where
// json.Marshal would write \u0026, \u003c and \u003e.
func marshal(v any, indent string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	_ = enc.Encode(v) // values decoded from JSON always encode
	return buf.Bytes()
}

func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
