package api

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The API writes apiclient's wire types, converted in this package; a JSON
// tag on a platform or dialog type means a handler encodes that type
// directly, tying the wire to the platform's Go types. Dialog state is
// persisted JSON, not a view, and keeps its tags.
func TestPlatformViewsCarryNoJSONTags(t *testing.T) {
	t.Parallel()
	// state.go and channel_config.go are saved state; the webhook_events.go files define webhook
	// event payloads, a wire format of their own (configs/webhooks/), written
	// to the outbox in the transaction of the fact they report.
	allowed := map[string]bool{
		filepath.Join("..", "dialog", "state.go"):            true,
		filepath.Join("..", "dialog", "webhook_events.go"):   true,
		filepath.Join("..", "platform", "webhook_events.go"): true,
		filepath.Join("..", "platform", "channel_config.go"): true,
	}
	for _, dir := range []string{filepath.Join("..", "platform"), filepath.Join("..", "dialog")} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") || allowed[path] {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					return true
				}
				for _, field := range st.Fields.List {
					if field.Tag == nil {
						continue
					}
					tag := reflect.StructTag(strings.Trim(field.Tag.Value, "`"))
					if _, has := tag.Lookup("json"); has {
						t.Errorf("%s: %s has a JSON tag %s; give the API an apiclient type and convert in pkg/api", path, ts.Name.Name, field.Tag.Value)
					}
				}
				return true
			})
		}
	}
}
