package llm_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/llm"
)

// canon re-encodes JSON with sorted keys, for comparisons.
func canon(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v in %s", err, s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestStrictSchemaPreparesToolsForOpenAIStrictMode(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"an empty schema becomes a closed empty object", ``,
			`{"type":"object","properties":{},"required":[],"additionalProperties":false}`},
		{"every property is required and optional ones become nullable",
			`{"type":"object","properties":{"email":{"type":"string","description":"Customer email"},"seats":{"type":"integer"}},"required":["email"]}`,
			`{"type":"object","properties":{"email":{"type":"string","description":"Customer email"},"seats":{"type":["integer","null"]}},"required":["email","seats"],"additionalProperties":false}`},
		{"nested objects are closed too",
			`{"type":"object","properties":{"address":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},"required":["address"]}`,
			`{"type":"object","properties":{"address":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}},"required":["address"],"additionalProperties":false}`},
		{"array items are prepared",
			`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}}}}},"required":["tags"]}`,
			`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"object","properties":{"k":{"type":["string","null"]}},"required":["k"],"additionalProperties":false}}},"required":["tags"],"additionalProperties":false}`},
		{"titles go, descriptions stay, a property named title stays",
			`{"title":"Args","type":"object","properties":{"title":{"type":"string","title":"T","description":"The book's title"}},"required":["title"]}`,
			`{"type":"object","properties":{"title":{"type":"string","description":"The book's title"}},"required":["title"],"additionalProperties":false}`},
		{"$ref and $defs are inlined, the use site's description wins",
			`{"type":"object","$defs":{"Money":{"type":"object","description":"an amount","properties":{"cents":{"type":"integer"}},"required":["cents"]}},"properties":{"price":{"$ref":"#/$defs/Money","description":"the price"}},"required":["price"]}`,
			`{"type":"object","properties":{"price":{"type":"object","description":"the price","properties":{"cents":{"type":"integer"}},"required":["cents"],"additionalProperties":false}},"required":["price"],"additionalProperties":false}`},
		{"an optional enum also accepts null",
			`{"type":"object","properties":{"size":{"type":"string","enum":["s","m"]}}}`,
			`{"type":"object","properties":{"size":{"type":["string","null"],"enum":["s","m",null]}},"required":["size"],"additionalProperties":false}`},
		{"an optional schema without a type is wrapped in anyOf with null",
			`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`,
			`{"type":"object","properties":{"v":{"anyOf":[{"anyOf":[{"type":"string"},{"type":"integer"}]},{"type":"null"}]}},"required":["v"],"additionalProperties":false}`},
		{"keywords strict mode refuses are dropped, the others kept",
			`{"type":"object","properties":{"code":{"type":"string","minLength":2,"maxLength":8,"pattern":"^[A-Z]+$","default":"AB"},"n":{"type":"integer","minimum":1}},"required":["code","n"]}`,
			`{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]+$"},"n":{"type":"integer","minimum":1}},"required":["code","n"],"additionalProperties":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := llm.StrictSchema(json.RawMessage(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if canon(t, string(got)) != canon(t, tt.want) {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	t.Run("a recursive schema is refused, so the tool goes without strict mode", func(t *testing.T) {
		_, err := llm.StrictSchema(json.RawMessage(`{"type":"object","$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"}}}},"properties":{"head":{"$ref":"#/$defs/N"}}}`))
		if err == nil || !strings.Contains(err.Error(), "recursive") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("the input is not modified", func(t *testing.T) {
		in := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","enum":["x"]}}}`)
		before := bytes.Clone(in)
		if _, err := llm.StrictSchema(in); err != nil || !bytes.Equal(in, before) {
			t.Fatalf("err %v, input now %s", err, in)
		}
	})
}

func TestDropNullsLeavesOutWhatTheModelLeftOut(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"email":"a@b.c","seats":null}`, `{"email":"a@b.c"}`},
		{`{"address":{"city":"Oslo","zip":null},"tags":[null,"x"]}`, `{"address":{"city":"Oslo"},"tags":[null,"x"]}`},
		{`{"n":12345678901234567890}`, `{"n":12345678901234567890}`},
		{`not json with null`, `not json with null`},
	}
	for _, tt := range tests {
		if got := string(llm.DropNulls(json.RawMessage(tt.in))); got != tt.want && canon(t, got) != canon(t, tt.want) {
			t.Errorf("DropNulls(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
