package mcptool

import (
	"fmt"
	"sort"
	"strings"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/redact"
)

// secretPrefix marks the tenant secrets among the vars.
const secretPrefix = botconfig.SecretPrefix

// expand fills the {{name}} placeholders in the values of m from vars,
// following botconfig's template grammar (which validated these values when
// the config was saved): "{{name}}" or "{{ secrets.NAME }}" is a variable,
// "{{{{" a literal "{{", "<<" a literal "<"; argument placeholders do not
// exist here. what names the map in errors ("header", "env"); errors name
// keys and variables, never values. Secret values used are added to used,
// for redaction.
func expand(server, what string, m map[string]string, vars botconfig.Vars, used map[string]struct{}) (map[string]string, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	for _, key := range sortedKeys(m) {
		val, err := substitute(m[key], vars, used)
		if err != nil {
			return nil, fmt.Errorf("mcp server %q: %s %q %w", server, what, key, err)
		}
		// A CR or LF in a header value would let a variable inject headers.
		if strings.ContainsAny(val, "\r\n\x00") {
			return nil, fmt.Errorf("mcp server %q: %s %q contains a line break or NUL after substitution", server, what, key)
		}
		out[key] = val
	}
	return out, nil
}

func substitute(s string, vars botconfig.Vars, used map[string]struct{}) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "<<"):
			b.WriteByte('<')
			i += 2
		case s[i] == '<':
			return "", fmt.Errorf(`has "<" at character %d: arguments cannot be used here; write "<<" for a literal "<"`, i+1)
		case strings.HasPrefix(s[i:], "{{{{"):
			b.WriteString("{{")
			i += 4
		case strings.HasPrefix(s[i:], "{{"):
			end := strings.Index(s[i+2:], "}}")
			if end < 0 {
				return "", fmt.Errorf(`has "{{" at character %d that is not closed by "}}"`, i+1)
			}
			name := strings.TrimSpace(s[i+2 : i+2+end])
			v, ok := vars[name]
			if !ok {
				return "", fmt.Errorf("uses {{%s}}, which has no value", name)
			}
			if strings.HasPrefix(name, secretPrefix) && v != "" {
				used[v] = struct{}{}
			}
			b.WriteString(v)
			i += end + 4
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), nil
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
// model or logs, in every form a server may echo them (pkg/redact): a server
// may echo a header back in an error or a result.
type redactor struct{ r *redact.Redactor }

func newRedactor(secrets map[string]struct{}) redactor {
	vals := make([]string, 0, len(secrets))
	for s := range secrets {
		vals = append(vals, s)
	}
	return redactor{redact.New(vals...)}
}

func (r redactor) redact(s string) string { return r.r.Redact(s) }
