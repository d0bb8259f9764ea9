package botconfig

import (
	"fmt"
	"slices"
	"strings"
)

// Vars holds the values of {{var}} placeholders for one dialog: the system
// variables (dialog_id, tenant_id, bot_id, chatbot_id, user_id, channel,
// locale, now), the config's context variables, and "secrets.NAME" entries.
type Vars map[string]string

// systemVariables are the {{var}} names the platform fills for every dialog.
var systemVariables = []string{"dialog_id", "tenant_id", "bot_id", "chatbot_id", "user_id", "channel", "locale", "now"}

// SystemVariables returns the {{var}} names the platform fills for every
// dialog: dialog_id, tenant_id, bot_id, chatbot_id, user_id, channel, locale
// and now.
func SystemVariables() []string { return slices.Clone(systemVariables) }

// SecretPrefix starts a {{secrets.NAME}} placeholder and the Vars key of a
// tenant secret.
const SecretPrefix = "secrets."

// AutofillSentinel is the seed configs' way to ask for a context value: a body
// or query value exactly equal to it is filled from the variable its key names.
const AutofillSentinel = "todo_autofill_by_system"

// sentinelKeys maps the seed's camelCase keys to system variables. Any other
// key must itself name a system or context variable.
var sentinelKeys = map[string]string{
	"dialogId": "dialog_id", "tenantId": "tenant_id", "chatbotId": "chatbot_id",
	"userId": "user_id", "botId": "bot_id",
}

func isSystemVariable(name string) bool {
	for _, v := range systemVariables {
		if v == name {
			return true
		}
	}
	return false
}

// segKind says what a template segment is.
type segKind uint8

const (
	segLiteral segKind = iota // text copied as is
	segArg                    // <name>: a model argument
	segVar                    // {{name}}: a context, system or secret variable
)

// segment is one piece of a template string.
type segment struct {
	kind segKind
	text string // the literal text, or the argument or variable name
	// brace marks an argument written the seed's way, {name}, so messages
	// quote it as written.
	brace bool
}

// spelled is an argument as the config wrote it: <name> or {name}.
func (s segment) spelled() string {
	if s.brace {
		return "{" + s.text + "}"
	}
	return "<" + s.text + ">"
}

// strTemplate is a parsed template string.
type strTemplate []segment

// TemplateError is a syntax error in a template string. Offset is the byte
// offset in the string where the bad placeholder starts.
type TemplateError struct {
	Offset int
	Msg    string
}

// Error says where in the string the problem starts (1-based) and what to do.
func (e *TemplateError) Error() string {
	return fmt.Sprintf("character %d: %s", e.Offset+1, e.Msg)
}

// parseTemplate splits s into literals and placeholders.
//
// The grammar is deliberately strict so a typo is an error, not a literal:
// "<name>" is an argument and "<<" a literal "<"; any other "<" is an error.
// "{{name}}" (spaces inside the braces allowed) is a variable and "{{{{" a
// literal "{{"; an unclosed or malformed "{{" is an error. A single "{" and
// any "}" or ">" are plain text.
func parseTemplate(s string) (strTemplate, error) { return parseTemplateSpelling(s, false) }

// parseEndpointTemplate is parseTemplate for endpoint values, where the
// seed's spelling of an argument is accepted too: "{name}" (a single brace,
// a name, a brace, nothing else inside) means "<name>", and checkRefs
// refuses it when name is not a declared parameter. Other single braces
// stay text, so JSON-looking text such as {"a": 1} or { x } is unaffected.
// "\{name}" is a literal "{name}" ("\\{name}" in the JSON source).
func parseEndpointTemplate(s string) (strTemplate, error) { return parseTemplateSpelling(s, true) }

func parseTemplateSpelling(s string, seedBraces bool) (strTemplate, error) {
	var t strTemplate
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t = append(t, segment{kind: segLiteral, text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "<<"):
			lit.WriteByte('<')
			i += 2
		case s[i] == '<':
			end := strings.IndexByte(s[i+1:], '>')
			if end < 0 || !isArgName(s[i+1:i+1+end]) {
				return nil, &TemplateError{i, `"<" must start an argument like <order_id> (letters, digits, '_' or '-'); write "<<" for a literal "<"`}
			}
			flush()
			t = append(t, segment{kind: segArg, text: s[i+1 : i+1+end]})
			i += end + 2
		case strings.HasPrefix(s[i:], "{{{{"):
			lit.WriteString("{{")
			i += 4
		case strings.HasPrefix(s[i:], "{{"):
			end := strings.Index(s[i+2:], "}}")
			if end < 0 {
				return nil, &TemplateError{i, `"{{" is not closed by "}}"; write "{{{{" for a literal "{{"`}
			}
			name := strings.TrimSpace(s[i+2 : i+2+end])
			if !isVarName(name) {
				return nil, &TemplateError{i, fmt.Sprintf(`{{%s}} is not a variable name: use {{name}} or {{secrets.NAME}}; write "{{{{" for a literal "{{"`, name)}
			}
			flush()
			t = append(t, segment{kind: segVar, text: name})
			i += end + 4
		case seedBraces && s[i] == '\\' && seedArgAt(s, i+1) != "":
			lit.WriteString("{" + seedArgAt(s, i+1) + "}")
			i += len(seedArgAt(s, i+1)) + 3
		case seedBraces && seedArgAt(s, i) != "":
			name := seedArgAt(s, i)
			flush()
			t = append(t, segment{kind: segArg, text: name, brace: true})
			i += len(name) + 2
		default:
			lit.WriteByte(s[i])
			i++
		}
	}
	flush()
	return t, nil
}

// seedArgAt returns name when s[i:] starts with "{name}", or "".
func seedArgAt(s string, i int) string {
	if i >= len(s) || s[i] != '{' {
		return ""
	}
	end := strings.IndexByte(s[i+1:], '}')
	if end < 0 || !isArgName(s[i+1:i+1+end]) {
		return ""
	}
	return s[i+1 : i+1+end]
}

// single returns the placeholder when the template is exactly one placeholder
// and nothing else: such values keep their JSON type and can be dropped.
func (t strTemplate) single() (segment, bool) {
	if len(t) == 1 && t[0].kind != segLiteral {
		return t[0], true
	}
	return segment{}, false
}

// isArgName accepts parameter names usable as <name>.
func isArgName(s string) bool {
	if s == "" || len(s) > 64 || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

// isVarName accepts {{name}} and {{secrets.NAME}} names.
func isVarName(s string) bool {
	if name, ok := strings.CutPrefix(s, SecretPrefix); ok {
		return isSecretName(name)
	}
	return isIdentifier(s)
}

// isIdentifier is a context variable name: a letter or '_', then letters,
// digits or '_', at most 64 in all.
func isIdentifier(s string) bool {
	if s == "" || len(s) > 64 || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return true
}

// isSecretName is a tenant secret name as the platform stores them: a letter
// or '_', then letters, digits or '_', at most 128 in all.
func isSecretName(s string) bool {
	if s == "" || len(s) > 128 || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return true
}

func isIdentStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || '0' <= c && c <= '9' }
