package api_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/parleyhq/parley/pkg/store/storetest"
)

func TestValidateCompilesAConfigWithoutSavingIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.OpenSQLite(t))
	cl := e.client(e.mustCreateTenant(t, "acme"))
	ctx := context.Background()

	t.Run("a valid config gives its prompt and tools", func(t *testing.T) {
		got, err := cl.Validate(ctx, botConfig(t))
		if err != nil {
			t.Fatal(err)
		}
		if !got.Valid || len(got.Errors) != 0 || got.Prompt == "" {
			t.Fatalf("validate = %+v, want valid with a prompt", got)
		}
		kinds := map[string]string{}
		for _, tool := range got.Tools {
			kinds[tool.Name] = tool.Kind
		}
		if kinds["lookup_order"] != "http" || kinds["current_time"] != "native" {
			t.Errorf("tools = %+v, want lookup_order (http) and current_time (native)", got.Tools)
		}
	})

	t.Run("an invalid config gives every problem with its pointer", func(t *testing.T) {
		got, err := cl.Validate(ctx, json.RawMessage(`{"basic_settings": {"name": ""}, "llm": {"temperature": 9}}`))
		if err != nil {
			t.Fatal(err)
		}
		if got.Valid || len(got.Errors) < 2 || got.Prompt != "" {
			t.Fatalf("validate = %+v, want invalid with at least two errors", got)
		}
		for _, p := range got.Errors {
			if p.Pointer == "" || p.Message == "" {
				t.Errorf("problem %+v lacks a pointer or message", p)
			}
		}
	})

	t.Run("the answer always has all four fields", func(t *testing.T) {
		var raw map[string]json.RawMessage
		body := map[string]any{"config": json.RawMessage(`{"basic_settings": {"name": ""}}`)}
		if err := cl.Do(ctx, "POST", "/v1/validate", body, &raw); err != nil {
			t.Fatal(err)
		}
		for _, field := range []string{"valid", "errors", "prompt", "tools"} {
			if _, ok := raw[field]; !ok {
				t.Errorf("response lacks %q: %v", field, raw)
			}
		}
		if string(raw["tools"]) != "[]" {
			t.Errorf("tools of an invalid config = %s, want []", raw["tools"])
		}
	})

	t.Run("nothing was saved", func(t *testing.T) {
		bots, err := cl.ListBots(ctx, "acme", "")
		if err != nil || len(bots.Bots) != 0 {
			t.Errorf("bots after validating = %+v, %v; want none", bots, err)
		}
	})
}
