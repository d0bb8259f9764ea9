package botconfig

import (
	"fmt"
	"strings"
)

// parseValue parses a query value, turning the autofill sentinel into the
// variable its key names.
func parseValue(key, value string, sc scope, at string, ps *Problems, where refPlace) (strTemplate, bool) {
	if value == AutofillSentinel {
		name, err := sentinelVariable(key, sc)
		if err != nil {
			ps.add(at, "%v", err)
			return nil, false
		}
		return strTemplate{{kind: segVar, text: name}}, true
	}
	vt, err := parseEndpointTemplate(value)
	if err != nil {
		ps.add(at, "%v", err)
		return nil, false
	}
	checkRefs(vt, sc, at, ps, where)
	return vt, true
}

// sentinelVariable resolves the variable an autofill sentinel under key means.
func sentinelVariable(key string, sc scope) (string, error) {
	if v, ok := sentinelKeys[key]; ok {
		return v, nil
	}
	if _, ok := sc.vars[key]; ok || isSystemVariable(key) {
		return key, nil
	}
	return "", fmt.Errorf("%q under key %q names no variable; use a key like dialogId, tenantId, chatbotId, userId, botId, a system variable or a declared context variable, or write {{variable}} instead", AutofillSentinel, key)
}

// refPlace is where a placeholder appears; the rules differ per place.
type refPlace uint8

const (
	refPath refPlace = iota
	refQuery
	refHeader
	refBody
	refNoArgs // MCP headers and env: no model arguments there
)

// checkRefs reports placeholders that do not resolve.
func checkRefs(t strTemplate, sc scope, at string, ps *Problems, where refPlace) {
	for _, s := range t {
		switch s.kind {
		case segArg:
			required, declared := sc.args[s.text]
			switch {
			case where == refNoArgs:
				ps.add(at, "<%s>: model arguments cannot be used here; use {{variable}} or {{secrets.NAME}}", s.text)
			case !declared && s.brace:
				ps.add(at, `{%s} is not a declared argument; add %q to parameters.properties, or write \{%s} (in JSON "\\{%s}") for a literal "{%s}"`, s.text, s.text, s.text, s.text, s.text)
			case !declared:
				ps.add(at, "<%s> is not a declared argument; add %q to parameters.properties", s.text, s.text)
			case where == refPath && !required:
				ps.add(at, "%s is optional but used in the URL path, which cannot be left empty; add %q to parameters.required or move it to query_params", s.spelled(), s.text)
			}
		case segVar:
			if strings.HasPrefix(s.text, SecretPrefix) || isSystemVariable(s.text) {
				continue
			}
			if _, ok := sc.vars[s.text]; !ok {
				ps.add(at, "{{%s}} is not a known variable; declare it in context_variables, use a system variable (%s) or {{secrets.NAME}}", s.text, strings.Join(systemVariables, ", "))
			}
		}
	}
}
