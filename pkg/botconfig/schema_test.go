package botconfig

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/parleyhq/parley/configs"
)

func loadSchemaDoc(t *testing.T) map[string]any {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(configs.AgentConfigSchema, &s); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	return s
}

func TestSchemaCompiles(t *testing.T) {
	if _, err := compiledSchema(); err != nil {
		t.Fatal(err)
	}
}

// Editors show descriptions as help, and additionalProperties false is what
// turns typos into errors; both must hold for every object in the schema.
func TestSchemaDescribesEveryFieldAndClosesEveryObject(t *testing.T) {
	s := loadSchemaDoc(t)
	var walk func(node map[string]any, at string)
	walk = func(node map[string]any, at string) {
		if props, ok := node["properties"].(map[string]any); ok {
			if node["additionalProperties"] != false {
				t.Errorf("%s: object with properties lacks additionalProperties: false", at)
			}
			for name, p := range props {
				prop := p.(map[string]any)
				if _, ok := prop["description"]; !ok && prop["$ref"] == nil {
					t.Errorf("%s/%s: no description", at, name)
				}
				walk(prop, at+"/"+name)
			}
		}
		if items, ok := node["items"].(map[string]any); ok {
			walk(items, at+"/items")
		}
	}
	walk(s, "")
	for name, d := range s["definitions"].(map[string]any) {
		def := d.(map[string]any)
		if def["description"] == nil {
			t.Errorf("definition %s: no description", name)
		}
		walk(def, "#/definitions/"+name)
	}
}

// The schema and the Go types must name the same fields, or valid configs
// would fail to decode (or typos would slip through the schema).
func TestSchemaAndGoTypesNameTheSameFields(t *testing.T) {
	s := loadSchemaDoc(t)
	defs := s["definitions"].(map[string]any)
	var compare func(typ reflect.Type, node map[string]any, at string)
	compare = func(typ reflect.Type, node map[string]any, at string) {
		if ref, ok := node["$ref"].(string); ok {
			node = defs[strings.TrimPrefix(ref, "#/definitions/")].(map[string]any)
		}
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
			if items, ok := node["items"].(map[string]any); ok {
				node = items
			}
		}
		if typ.Kind() != reflect.Struct {
			return
		}
		props, _ := node["properties"].(map[string]any)
		var goNames, schemaNames []string
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			goNames = append(goNames, name)
			if p, ok := props[name].(map[string]any); ok {
				compare(f.Type, p, at+"/"+name)
			}
		}
		for name := range props {
			schemaNames = append(schemaNames, name)
		}
		sort.Strings(goNames)
		sort.Strings(schemaNames)
		if !reflect.DeepEqual(goNames, schemaNames) {
			t.Errorf("%s: Go fields %v, schema properties %v", at, goNames, schemaNames)
		}
	}
	compare(reflect.TypeOf(Config{}), s, "")
}
