package botconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// MaxConfigSize is the largest config Load accepts. Real configs are a few
// KiB; the cap keeps a hostile upload from costing memory and CPU.
const MaxConfigSize = 1 << 20

// LoadFile reads and loads the config at path with the default options.
func LoadFile(path string) (*Config, error) { return Options{}.LoadFile(path) }

// Load parses a config strictly and validates it with the default options:
// see Options.Load.
func Load(data []byte) (*Config, error) { return Options{}.Load(data) }

// LoadFile reads and loads the config at path. A file that cannot be read is
// a plain error; an invalid config is a Problems.
func (o Options) LoadFile(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("botconfig: %w", err)
	}
	defer f.Close()
	// Read one byte past the cap so Load can tell an oversized file apart.
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigSize+1))
	if err != nil {
		return nil, fmt.Errorf("botconfig: read %s: %w", path, err)
	}
	return o.Load(data)
}

// Load parses a config strictly and validates it: malformed JSON (reported
// with line and column), trailing data, documents over MaxConfigSize, schema
// violations (unknown fields, wrong types, out-of-range values) and semantic
// mistakes (dangling tool references, unresolvable placeholders, ...) are all
// reported at once as Problems.
func (o Options) Load(data []byte) (*Config, error) {
	if ps := checkSyntax(data); len(ps) > 0 {
		return nil, ps.sorted()
	}
	problems := validateSchema(data)
	cfg, err := decodeStrict(data)
	if err != nil && len(problems) == 0 {
		// The schema explains what is wrong in the author's terms; the decoder
		// error is only a backstop for what the schema let through.
		problems = append(problems, decodeProblem(err))
	}
	if cfg != nil {
		problems = mergeProblems(problems, o.Validate(cfg))
	}
	if len(problems) > 0 {
		return nil, problems.sorted()
	}
	return cfg, nil
}

// LoadAndCompile is Load, then Compile: what the platform does with a
// config it is asked to save.
func (o Options) LoadAndCompile(data []byte) (*Bot, error) {
	cfg, err := o.Load(data)
	if err != nil {
		return nil, err
	}
	return o.Compile(cfg)
}

// decodeStrict decodes data into a Config, refusing unknown fields. After a
// wrong type or an unknown field encoding/json keeps decoding the rest, so the
// Config is still returned then: semantic checks can report the other
// problems in the same pass.
func decodeStrict(data []byte) (*Config, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var cfg Config
	err := dec.Decode(&cfg)
	var typ *json.UnmarshalTypeError
	if err == nil || errors.As(err, &typ) || strings.HasPrefix(err.Error(), "json: unknown field") {
		return &cfg, err
	}
	return nil, err
}

// decodeProblem explains a decoding error the schema did not catch.
func decodeProblem(err error) Problem {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		p := ""
		if typ.Field != "" {
			p = "/" + string(bytes.ReplaceAll([]byte(typ.Field), []byte("."), []byte("/")))
		}
		return Problem{p, fmt.Sprintf("must be %s, not a JSON %s", typ.Type, typ.Value)}
	}
	return Problem{"", "config does not match the agent-config format: " + err.Error()}
}

// mergeProblems adds semantic problems to schema problems, leaving out those
// about a value the schema already flagged, or inside it: one clear message
// per mistake.
func mergeProblems(schema, semantic Problems) Problems {
	out := schema
	for _, p := range semantic {
		if !coveredBy(p.Pointer, schema) {
			out = append(out, p)
		}
	}
	return out
}

func coveredBy(pointer string, ps Problems) bool {
	for _, p := range ps {
		if p.Pointer != "" && (pointer == p.Pointer || strings.HasPrefix(pointer, p.Pointer+"/")) {
			return true
		}
	}
	return false
}
