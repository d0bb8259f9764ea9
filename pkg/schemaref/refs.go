package schemaref

import (
	"fmt"
	"sort"
	"strings"
)

// RemoteRef is a reference in a JSON Schema that points outside it.
type RemoteRef struct {
	// Pointer is the JSON pointer of the offending value within the schema,
	// e.g. "/properties/id/$ref".
	Pointer string
	// Key is "$ref", "$id" or "id"; Value what it says.
	Key, Value string
}

func (r RemoteRef) Error() string {
	return fmt.Sprintf("%s %q points outside the schema; only local references (#/...) are allowed", r.Pointer, r.Value)
}

// RemoteRefs returns, in a stable order, every reference in the decoded
// schema doc that points outside it: a "$ref" or "$id" that does not start
// with "#", or a draft-04 "id" that names a remote base. The schema library
// would fetch such a reference with its own HTTP client, past pkg/outbound,
// so a schema from a tenant or an MCP server could make the server reach
// internal addresses.
func RemoteRefs(doc any) []RemoteRef {
	var refs []RemoteRef
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				child, here := v[k], at+"/"+pointerToken(k)
				if s, ok := child.(string); ok && remote(k, s) {
					refs = append(refs, RemoteRef{Pointer: here, Key: k, Value: s})
				}
				walk(child, here)
			}
		case []any:
			for i, child := range v {
				walk(child, fmt.Sprintf("%s/%d", at, i))
			}
		}
	}
	walk(doc, "")
	return refs
}

func remote(key, value string) bool {
	switch key {
	case "$ref", "$id":
		return !strings.HasPrefix(value, "#")
	case "id":
		return strings.Contains(value, ":")
	}
	return false
}

// pointerToken escapes a key for a JSON pointer (RFC 6901).
func pointerToken(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
