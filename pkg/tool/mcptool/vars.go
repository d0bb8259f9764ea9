package mcptool

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/parleyhq/parley/pkg/botconfig"
)

// placeholder matches {{name}} and {{ secrets.NAME }} in header and env values.
//
// botconfig's template engine renders endpoints, whose rules (argument
// placeholders, escaping per URL part) do not apply here: a header or env
// value only ever takes dialog variables, so this package substitutes them
// itself.
var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_.\-]+)\s*\}\}`)

// secretPrefix marks the tenant secrets among the vars.
const secretPrefix = "secrets."

// expand replaces every {{name}} in the values of m from vars. what names the
// map in errors ("header", "env"); errors name keys and variables, never values.
// The secrets used are added to used, for redaction.
func expand(server, what string, m map[string]string, vars botconfig.Vars, used map[string]struct{}) (map[string]string, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	for _, key := range sortedKeys(m) {
		var missing string
		val := placeholder.ReplaceAllStringFunc(m[key], func(match string) string {
			name := placeholder.FindStringSubmatch(match)[1]
			v, ok := vars[name]
			if !ok {
				if missing == "" {
					missing = name
				}
				return ""
			}
			if strings.HasPrefix(name, secretPrefix) && v != "" {
				used[v] = struct{}{}
			}
			return v
		})
		if missing != "" {
			return nil, fmt.Errorf("mcp server %q: %s %q uses {{%s}}, which has no value", server, what, key, missing)
		}
		// A CR or LF in a header value would let a variable inject headers.
		if strings.ContainsAny(val, "\r\n\x00") {
			return nil, fmt.Errorf("mcp server %q: %s %q contains a line break or NUL after substitution", server, what, key)
		}
		out[key] = val
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// redactor replaces secret values with "[redacted]" in text that reaches the
// model or logs: a server may echo a header back in an error or a result.
type redactor struct{ r *strings.Replacer }

func newRedactor(secrets map[string]struct{}) redactor {
	if len(secrets) == 0 {
		return redactor{}
	}
	vals := make([]string, 0, len(secrets))
	for s := range secrets {
		vals = append(vals, s)
	}
	// Longest first, so a secret that contains another is replaced whole.
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	pairs := make([]string, 0, 2*len(vals))
	for _, v := range vals {
		pairs = append(pairs, v, "[redacted]")
	}
	return redactor{strings.NewReplacer(pairs...)}
}

func (r redactor) redact(s string) string {
	if r.r == nil {
		return s
	}
	return r.r.Replace(s)
}
