package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/xeipuuv/gojsonschema"

	"github.com/parleyhq/parley/pkg/llm"
)

// Set is the ordered, name-indexed collection of tools one dialog may call.
// It is safe for concurrent calls.
type Set struct {
	tools   []Tool
	byName  map[string]int
	schemas []*gojsonschema.Schema
	defs    []Definition
}

// SchemaCache shares compiled argument schemas between sets, so a bot version's
// schemas are compiled once however many dialogs run it. Keyed by schema text.
type SchemaCache struct {
	mu      sync.Mutex
	schemas map[string]*gojsonschema.Schema
}

// NewSchemaCache returns an empty cache.
func NewSchemaCache() *SchemaCache {
	return &SchemaCache{schemas: map[string]*gojsonschema.Schema{}}
}

func (c *SchemaCache) compile(params json.RawMessage) (*gojsonschema.Schema, error) {
	key := string(params)
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.schemas[key]; ok {
		return s, nil
	}
	if err := checkSelfContained(params); err != nil {
		return nil, err
	}
	s, err := gojsonschema.NewSchema(gojsonschema.NewBytesLoader(params))
	if err != nil {
		return nil, err
	}
	c.schemas[key] = s
	return s, nil
}

// CheckParameters reports why params, a tool's argument schema, would not
// be accepted by NewSet (it does not compile, or it is not self-contained);
// empty params are the empty object schema and pass. For schemas a caller
// sends with a request, checked before they reach a Set.
func CheckParameters(params json.RawMessage) error {
	if len(bytes.TrimSpace(params)) == 0 {
		return nil
	}
	_, err := NewSchemaCache().compile(params)
	return err
}

// NewSet returns a set of the given tools in order. Names must be unique and
// every schema must compile. cache may be nil.
func NewSet(cache *SchemaCache, tools ...Tool) (*Set, error) {
	if cache == nil {
		cache = NewSchemaCache()
	}
	s := &Set{byName: make(map[string]int, len(tools))}
	for _, t := range tools {
		def := t.Definition()
		if len(bytes.TrimSpace(def.Parameters)) == 0 {
			def.Parameters = llm.EmptyObjectSchema()
		}
		if _, dup := s.byName[def.Name]; dup {
			return nil, fmt.Errorf("tool %q is defined twice", def.Name)
		}
		schema, err := cache.compile(def.Parameters)
		if err != nil {
			return nil, fmt.Errorf("tool %q: parameters schema: %w", def.Name, err)
		}
		s.byName[def.Name] = len(s.tools)
		s.tools = append(s.tools, t)
		s.schemas = append(s.schemas, schema)
		s.defs = append(s.defs, def)
	}
	return s, nil
}

// Definitions returns the tools' definitions in order. The slice is shared:
// do not modify it.
func (s *Set) Definitions() []Definition { return s.defs }

// Len returns the number of tools.
func (s *Set) Len() int { return len(s.tools) }

// Lookup returns the tool with the given name.
func (s *Set) Lookup(name string) (Tool, bool) {
	i, ok := s.byName[name]
	if !ok {
		return nil, false
	}
	return s.tools[i], true
}

// Validate checks args against the named tool's schema. The error lists every
// problem, worded for the model to correct its call.
func (s *Set) Validate(name string, args json.RawMessage) error {
	i, ok := s.byName[name]
	if !ok {
		return fmt.Errorf("unknown tool %q; available tools: %s", name, strings.Join(s.names(), ", "))
	}
	args = normalizeArgs(args)
	// The schema loader decodes only the first JSON value and ignores what
	// follows, so `{"a":1} garbage` would pass; check the whole text first.
	if !json.Valid(args) {
		return errors.New("arguments are not valid JSON: send one JSON object")
	}
	res, err := s.schemas[i].Validate(gojsonschema.NewBytesLoader(args))
	if err != nil {
		return fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if res.Valid() {
		return nil
	}
	var msgs []string
	for _, e := range res.Errors() {
		msgs = append(msgs, e.String())
	}
	sort.Strings(msgs)
	return errors.New("invalid arguments: " + strings.Join(msgs, "; "))
}

// Call validates args and calls the named tool. Every failure (unknown tool,
// invalid arguments, a tool error, a panic) comes back as an is_error Result,
// never as a Go error, so the loop can hand it to the model.
func (s *Set) Call(ctx context.Context, name string, args json.RawMessage) (res Result) {
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			res = Errorf(fmt.Sprintf("tool %q failed unexpectedly", name))
		}
		if res.Meta.Duration == 0 {
			res.Meta.Duration = time.Since(start)
		}
	}()
	if err := s.Validate(name, args); err != nil {
		return Errorf(err.Error())
	}
	args = normalizeArgs(args) // the tool sees the {} that was validated
	t, _ := s.Lookup(name)
	r, err := t.Call(ctx, args)
	if err != nil {
		r.IsError = true
		if r.Content == "" {
			r.Content = err.Error()
		}
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			r.Content = fmt.Sprintf("tool %q did not finish in time", name)
		}
	}
	return r
}

func (s *Set) names() []string {
	names := make([]string, len(s.defs))
	for i, d := range s.defs {
		names[i] = d.Name
	}
	return names
}

// normalizeArgs turns absent arguments (models send "" for no-parameter
// tools) into an empty object.
func normalizeArgs(args json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(args)) == 0 {
		return json.RawMessage(`{}`)
	}
	return args
}
