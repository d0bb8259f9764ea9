package botconfig

import (
	"fmt"
	"strings"
	"sync"

	"github.com/parleyhq/parley/configs"
	"github.com/xeipuuv/gojsonschema"
)

// compiledSchema is the agent-config schema, compiled once on first use and
// read-only afterwards (compiling it per call would dominate Load's cost).
var compiledSchema = sync.OnceValues(func() (*gojsonschema.Schema, error) {
	return gojsonschema.NewSchema(gojsonschema.NewBytesLoader(configs.AgentConfigSchema))
})

// validateSchema checks data (known to be one JSON object) against the
// agent-config schema and explains each violation at its JSON pointer.
func validateSchema(data []byte) Problems {
	schema, err := compiledSchema()
	if err != nil {
		// The schema is embedded and tested; this is a build defect.
		panic(fmt.Sprintf("botconfig: embedded agent-config schema does not compile: %v", err))
	}
	res, err := schema.Validate(gojsonschema.NewBytesLoader(data))
	if err != nil {
		return Problems{{"", "config could not be checked against the schema: " + err.Error()}}
	}
	var ps Problems
	for _, e := range res.Errors() {
		ps = append(ps, schemaProblem(e))
	}
	return ps
}

// schemaProblem rewrites a gojsonschema error as a pointer and a message that
// says what to do.
func schemaProblem(e gojsonschema.ResultError) Problem {
	p := contextPointer(e.Context())
	d := e.Details()
	switch e.Type() {
	case "required":
		name := fmt.Sprint(d["property"])
		return Problem{ptr(p, name), fmt.Sprintf("%q is required; add it", name)}
	case "additional_property_not_allowed":
		name := fmt.Sprint(d["property"])
		return Problem{ptr(p, name), fmt.Sprintf("unknown field %q; check its spelling or remove it (see configs/agent-config.schema.json)", name)}
	case "invalid_type":
		return Problem{p, fmt.Sprintf("must be %s, not %s", article(fmt.Sprint(d["expected"])), article(fmt.Sprint(d["given"])))}
	case "enum":
		return Problem{p, fmt.Sprintf("must be one of %s", d["allowed"])}
	case "pattern":
		return Problem{p, fmt.Sprintf("%q does not match %s", fmt.Sprint(e.Value()), d["pattern"]) + patternHint(p)}
	case "number_gte", "number_gt", "number_lte", "number_lt", "string_lte", "array_max_items":
		return Problem{p, lowerFirst(e.Description()) + "; " + rangeHint}
	case "string_gte":
		if fmt.Sprint(d["min"]) == "1" {
			return Problem{p, "must not be empty"}
		}
	}
	return Problem{p, lowerFirst(e.Description())}
}

const rangeHint = "see docs/agent-config.md for the allowed range"

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// patternHint says in words what a name pattern allows.
func patternHint(p string) string {
	if strings.HasSuffix(p, "/name") || strings.Contains(p, "/native_tools/") || strings.HasSuffix(p, "/chatbot_id") {
		return "; use letters, digits, '_' and '-' only, within the length limit"
	}
	return ""
}

// article turns a gojsonschema type list ("string", "integer", "array") into
// words ("a string", "an integer").
func article(t string) string {
	switch t {
	case "":
		return "a value"
	case "null":
		return "null"
	}
	if strings.ContainsAny(t[:1], "aeiou") {
		return "an " + t
	}
	return "a " + t
}

// contextPointer converts gojsonschema's "(root).tools.0.name" path into a
// JSON pointer. A NUL delimiter keeps keys that contain dots intact.
func contextPointer(c *gojsonschema.JsonContext) string {
	if c == nil {
		return ""
	}
	parts := strings.Split(c.String("\x00"), "\x00")
	p := ""
	for _, part := range parts[1:] { // parts[0] is "(root)"
		p = ptr(p, part)
	}
	return p
}
