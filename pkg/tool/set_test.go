package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeTool is a function-field fake: each test says what Call does.
type fakeTool struct {
	def  Definition
	call func(ctx context.Context, args json.RawMessage) (Result, error)
}

func (f *fakeTool) Definition() Definition { return f.def }

func (f *fakeTool) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	return f.call(ctx, args)
}

// echoTool returns its arguments as content.
func echoTool(name, params string) *fakeTool {
	return &fakeTool{
		def: Definition{Name: name, Description: "echo", Parameters: json.RawMessage(params)},
		call: func(_ context.Context, args json.RawMessage) (Result, error) {
			return Result{Content: string(args)}, nil
		},
	}
}

const orderSchema = `{"type": "object", "properties": {
	"order_id": {"type": "string", "pattern": "^[A-Z][0-9]+$"},
	"qty": {"type": "integer", "minimum": 1}},
	"required": ["order_id"], "additionalProperties": false}`

func TestNewSet(t *testing.T) {
	cases := []struct {
		name    string
		tools   []Tool
		wantErr string
	}{
		{"distinct tools make a set", []Tool{echoTool("a", orderSchema), echoTool("b", "")}, ""},
		{"a name used twice is refused", []Tool{echoTool("a", ""), echoTool("a", "")}, `tool "a" is defined twice`},
		{"a schema that does not compile is refused", []Tool{echoTool("bad", `{"type": 12}`)}, `tool "bad": parameters schema`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewSet(nil, tc.tools...)
			if tc.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestSetKeepsOrderAndLooksUpByName(t *testing.T) {
	set, err := NewSet(nil, echoTool("b", orderSchema), echoTool("a", ""), echoTool("c", ""))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range set.Definitions() {
		names = append(names, d.Name)
	}
	if strings.Join(names, ",") != "b,a,c" || set.Len() != 3 {
		t.Errorf("definitions = %v, len %d", names, set.Len())
	}
	if string(set.Definitions()[1].Parameters) != `{"type":"object","properties":{}}` {
		t.Errorf("a tool without parameters got %s, want the empty object schema", set.Definitions()[1].Parameters)
	}
	if tl, ok := set.Lookup("c"); !ok || tl.Definition().Name != "c" {
		t.Error("Lookup(c) failed")
	}
	if _, ok := set.Lookup("zz"); ok {
		t.Error("Lookup found a tool that does not exist")
	}
}

func TestValidate(t *testing.T) {
	set, err := NewSet(nil, echoTool("get_order", orderSchema), echoTool("ping", ""))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, tool, args string
		want             []string // fragments of the error; nil means valid
	}{
		{"valid arguments pass", "get_order", `{"order_id": "A12", "qty": 2}`, nil},
		{"no arguments at all count as an empty object", "ping", ``, nil},
		{"whitespace counts as an empty object", "ping", "  \n", nil},
		{"a missing required argument is named", "get_order", `{"qty": 2}`, []string{"order_id is required"}},
		{"a wrong type is named", "get_order", `{"order_id": "A1", "qty": "two"}`, []string{"qty", "integer"}},
		{"every problem is listed at once", "get_order", `{"order_id": "a1", "qty": 0, "extra": true}`,
			[]string{"order_id", "qty", "extra"}},
		{"invalid JSON is reported as such", "get_order", `{"order_id": `, []string{"not valid JSON"}},
		{"trailing text after the object is invalid JSON", "get_order", `{"order_id": "A1"} {"order_id": "B2"}`, []string{"not valid JSON"}},
		{"null is not an object", "get_order", `null`, []string{"object"}},
		{"an array is not an object", "ping", `[]`, []string{"object"}},
		{"an unknown tool lists the available ones", "get_ordr", `{}`, []string{`unknown tool "get_ordr"`, "get_order, ping"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := set.Validate(tc.tool, json.RawMessage(tc.args))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("err = %v, want valid", err)
				}
				return
			}
			if err == nil {
				t.Fatal("invalid arguments passed")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestCall(t *testing.T) {
	var called bool
	tools := []Tool{
		&fakeTool{def: Definition{Name: "strict", Parameters: json.RawMessage(orderSchema)},
			call: func(context.Context, json.RawMessage) (Result, error) {
				called = true
				return Result{Content: "ok"}, nil
			}},
		echoTool("echo", ""),
		&fakeTool{def: Definition{Name: "fails"},
			call: func(context.Context, json.RawMessage) (Result, error) { return Result{}, errors.New("the CRM said no") }},
		&fakeTool{def: Definition{Name: "fails_with_content"},
			call: func(context.Context, json.RawMessage) (Result, error) {
				return Result{Content: "HTTP 409: duplicate"}, errors.New("conflict")
			}},
		&fakeTool{def: Definition{Name: "panics"},
			call: func(context.Context, json.RawMessage) (Result, error) { panic("boom") }},
		&fakeTool{def: Definition{Name: "slow"},
			call: func(ctx context.Context, _ json.RawMessage) (Result, error) { <-ctx.Done(); return Result{}, ctx.Err() }},
	}
	set, err := NewSet(nil, tools...)
	if err != nil {
		t.Fatal(err)
	}
	expired, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	cases := []struct {
		name, tool, args string
		ctx              context.Context
		wantError        bool
		wantContent      string
	}{
		{"invalid arguments never reach the tool", "strict", `{"order_id": 5}`, nil, true, "invalid arguments"},
		{"the tool gets an empty object when the model sent nothing", "echo", ``, nil, false, `{}`},
		{"a tool error becomes an is_error result with its text", "fails", `{}`, nil, true, "the CRM said no"},
		{"a tool error keeps the content the tool wrote", "fails_with_content", `{}`, nil, true, "HTTP 409: duplicate"},
		{"a panic becomes an is_error result", "panics", `{}`, nil, true, `tool "panics" failed unexpectedly`},
		{"a deadline becomes a timeout the model can read", "slow", `{}`, expired, true, `tool "slow" did not finish in time`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			called = false
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			res := set.Call(ctx, tc.tool, json.RawMessage(tc.args))
			if res.IsError != tc.wantError || !strings.Contains(res.Content, tc.wantContent) {
				t.Errorf("result = %+v, want is_error=%v with %q", res, tc.wantError, tc.wantContent)
			}
			if res.Meta.Duration <= 0 {
				t.Error("Meta.Duration is not set")
			}
			if tc.tool == "strict" && called {
				t.Error("the tool ran with invalid arguments")
			}
		})
	}
}

func TestSetIsSafeForConcurrentCalls(t *testing.T) {
	set, err := NewSet(nil, echoTool("get_order", orderSchema))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := range 64 {
		wg.Go(func() {
			args := fmt.Sprintf(`{"order_id": "A%d"}`, i)
			if i%2 == 1 {
				args = `{"order_id": 1}`
			}
			res := set.Call(context.Background(), "get_order", json.RawMessage(args))
			if res.IsError != (i%2 == 1) {
				errs <- fmt.Sprintf("call %d: %+v", i, res)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestSchemaCacheCompilesEachSchemaOnce(t *testing.T) {
	cache := NewSchemaCache()
	a, _ := NewSet(cache, echoTool("x", orderSchema))
	b, _ := NewSet(cache, echoTool("y", orderSchema))
	if a.schemas[0] != b.schemas[0] {
		t.Fatal("two sets sharing a cache compiled the same schema twice")
	}
}

// largeSchema has n properties of mixed kinds, nested objects and arrays,
// like a generous CRM or booking tool.
func largeSchema(n int) (schema, args string) {
	var props, values []string
	for i := range n {
		switch i % 5 {
		case 0:
			props = append(props, fmt.Sprintf(`"s%d": {"type": "string", "minLength": 1, "maxLength": 200, "pattern": "^[a-z0-9 ]+$"}`, i))
			values = append(values, fmt.Sprintf(`"s%d": "value %d"`, i, i))
		case 1:
			props = append(props, fmt.Sprintf(`"n%d": {"type": "integer", "minimum": 0, "maximum": 1000}`, i))
			values = append(values, fmt.Sprintf(`"n%d": %d`, i, i))
		case 2:
			props = append(props, fmt.Sprintf(`"e%d": {"type": "string", "enum": ["low", "medium", "high"]}`, i))
			values = append(values, fmt.Sprintf(`"e%d": "medium"`, i))
		case 3:
			props = append(props, fmt.Sprintf(`"a%d": {"type": "array", "maxItems": 10, "items": {"type": "string"}}`, i))
			values = append(values, fmt.Sprintf(`"a%d": ["x", "y", "z"]`, i))
		case 4:
			props = append(props, fmt.Sprintf(`"o%d": {"type": "object", "properties": {"street": {"type": "string"}, "zip": {"type": "string", "pattern": "^[0-9]{5}$"}}, "required": ["zip"]}`, i))
			values = append(values, fmt.Sprintf(`"o%d": {"street": "Main St", "zip": "12345"}`, i))
		}
	}
	schema = `{"type": "object", "properties": {` + strings.Join(props, ",") + `}, "additionalProperties": false}`
	return schema, `{` + strings.Join(values, ",") + `}`
}

func TestLargeSchemaFixtureIsValid(t *testing.T) {
	schema, args := largeSchema(50)
	set, err := NewSet(nil, echoTool("big", schema))
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Validate("big", json.RawMessage(args)); err != nil {
		t.Fatalf("the benchmark's arguments are invalid, so it would measure the error path: %v", err)
	}
}

// BenchmarkValidate measures argument validation, which runs before every
// tool call: go test ./pkg/tool -run '^$' -bench Validate -benchmem
func BenchmarkValidate(b *testing.B) {
	largeS, largeArgs := largeSchema(50)
	cases := []struct{ name, schema, args string }{
		{"small schema (2 properties)", orderSchema, `{"order_id": "A12", "qty": 2}`},
		{"large schema (50 properties, nested)", largeS, largeArgs},
		{"small schema, invalid arguments", orderSchema, `{"order_id": 5, "qty": 0, "x": 1}`},
	}
	for _, bc := range cases {
		set, err := NewSet(nil, echoTool("t", bc.schema))
		if err != nil {
			b.Fatal(err)
		}
		args := json.RawMessage(bc.args)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = set.Validate("t", args)
			}
		})
	}
}

// remoteRefTool declares a schema that would make the schema library fetch a URL.
type remoteRefTool struct{ params string }

func (r remoteRefTool) Definition() Definition {
	return Definition{Name: "fetchy", Parameters: json.RawMessage(r.params)}
}

func (remoteRefTool) Call(context.Context, json.RawMessage) (Result, error) {
	return Result{}, nil
}

func TestNewSetRefusesSchemasThatReachOutside(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		fmt.Fprint(w, `{"type":"string"}`)
	}))
	defer srv.Close()
	tests := []struct {
		name   string
		params string
		ok     bool
	}{
		{"a local reference is allowed", `{"type":"object","properties":{"a":{"$ref":"#/definitions/s"}},"definitions":{"s":{"type":"string"}}}`, true},
		{"a remote reference is refused", `{"type":"object","properties":{"a":{"$ref":"` + srv.URL + `/s.json"}}}`, false},
		{"a relative reference is refused", `{"type":"object","properties":{"a":{"$ref":"other.json"}}}`, false},
		{"a remote base id is refused", `{"$id":"` + srv.URL + `/base.json","type":"object","properties":{"a":{"$ref":"#/definitions/s"}},"definitions":{"s":{"type":"string"}}}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewSet(nil, remoteRefTool{tc.params})
			if (err == nil) != tc.ok {
				t.Fatalf("NewSet error = %v, want ok=%v", err, tc.ok)
			}
		})
	}
	if hits != 0 {
		t.Errorf("the schema library fetched %d remote documents", hits)
	}
}
