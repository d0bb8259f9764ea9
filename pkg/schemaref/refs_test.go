package schemaref_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/parleyhq/parley/pkg/schemaref"
)

func TestRemoteRefsFindsEveryReferenceOutsideTheSchema(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   []string // pointers
	}{
		{"a local $ref is fine", `{"properties":{"a":{"$ref":"#/definitions/s"}}}`, nil},
		{"a remote $ref is found", `{"properties":{"a":{"$ref":"https://evil.example/s.json"}}}`, []string{"/properties/a/$ref"}},
		{"a relative $ref is found", `{"items":[{"$ref":"other.json"}]}`, []string{"/items/0/$ref"}},
		{"a remote $id is found", `{"$id":"https://evil.example/base"}`, []string{"/$id"}},
		{"a draft-04 id naming a remote base is found", `{"id":"http://evil.example/"}`, []string{"/id"}},
		{"a property called id is not a reference", `{"properties":{"id":{"type":"string"}}}`, nil},
		{"keys are escaped and sorted", `{"properties":{"b/c":{"$ref":"x"},"a~":{"$ref":"y"}}}`, []string{"/properties/a~0/$ref", "/properties/b~1c/$ref"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc any
			if err := json.Unmarshal([]byte(tt.schema), &doc); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range schemaref.RemoteRefs(doc) {
				got = append(got, r.Pointer)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("RemoteRefs = %v; want %v", got, tt.want)
			}
		})
	}
}
