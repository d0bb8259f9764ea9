package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/tool"
	"github.com/parleyhq/parley/pkg/tool/builtin"
)

var fixedNow = time.Date(2026, 11, 22, 15, 4, 5, 0, time.UTC)

// mustSet builds every standard native tool into a validated tool.Set, the way
// a dialog gets them.
func mustSet(t *testing.T, env builtin.Env) *tool.Set {
	t.Helper()
	reg := builtin.NewRegistry()
	tools, err := reg.Build(reg.Names(), env)
	if err != nil {
		t.Fatal(err)
	}
	set, err := tool.NewSet(nil, tools...)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestNativeTools(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	env := builtin.Env{Now: func() time.Time { return fixedNow }}
	tests := []struct {
		name     string
		tool     string
		args     string
		wantErr  bool
		wantStop string
		want     []string
	}{
		{"current_time answers in UTC by default", "current_time", `{}`, false, "", []string{`"datetime":"2026-11-22T15:04:05Z"`, `"weekday":"Sunday"`}},
		{"current_time converts to the requested zone", "current_time", `{"timezone":"Europe/Berlin"}`, false, "", []string{fixedNow.In(berlin).Format(time.RFC3339), `"timezone":"Europe/Berlin"`}},
		{"current_time rejects an unknown zone with a hint", "current_time", `{"timezone":"Mars/Olympus"}`, true, "", []string{"unknown time zone", "IANA"}},
		{"current_time rejects unknown arguments", "current_time", `{"tz":"UTC"}`, true, "", []string{"invalid arguments"}},
		{"handoff_to_human stops the dialog with handoff", "handoff_to_human", `{"reason":"asked for a person"}`, false, builtin.StopHandoff, []string{"human agent"}},
		{"handoff_to_human needs a reason", "handoff_to_human", `{}`, true, "", []string{"reason"}},
		{"end_dialog completes the dialog", "end_dialog", `{}`, false, builtin.StopCompleted, []string{"closed"}},
		{"cannot_answer notes it and lets the model answer", "cannot_answer", `{"reason":"no such product"}`, false, "", []string{"cannot help"}},
		{"cannot_answer needs a reason", "cannot_answer", `{}`, true, "", []string{"reason"}},
		{"recall of a missing note says so", "recall", `{"key":"nope"}`, false, "", []string{`No note named "nope"`}},
		{"remember rejects an empty key", "remember", `{"key":"","value":"x"}`, true, "", []string{"key must be"}},
		{"remember rejects an oversized value", "remember", fmt.Sprintf(`{"key":"k","value":%q}`, strings.Repeat("x", builtin.MaxMemoryValueBytes+1)), true, "", []string{"keep notes under"}},
	}
	set := mustSet(t, env)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := set.Call(context.Background(), tc.tool, json.RawMessage(tc.args))
			if res.IsError != tc.wantErr {
				t.Fatalf("is_error = %v, want %v; content %q", res.IsError, tc.wantErr, res.Content)
			}
			if res.Stop != tc.wantStop {
				t.Errorf("stop = %q, want %q", res.Stop, tc.wantStop)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("content %q does not contain %q", res.Content, w)
				}
			}
		})
	}
}

func TestRememberAndRecallShareTheDialogMemory(t *testing.T) {
	mem := builtin.NewMemory()
	set := mustSet(t, builtin.Env{Memory: mem})
	ctx := context.Background()
	for _, args := range []string{`{"key":"order","value":"A-1001"}`, `{"key":"email","value":"ann@example.com"}`, `{"key":"order","value":"A-1002"}`} {
		if res := set.Call(ctx, "remember", json.RawMessage(args)); res.IsError {
			t.Fatalf("remember %s: %s", args, res.Content)
		}
	}
	if res := set.Call(ctx, "recall", json.RawMessage(`{"key":"order"}`)); res.Content != "A-1002" {
		t.Errorf("recall order = %q, want the overwritten value A-1002", res.Content)
	}
	res := set.Call(ctx, "recall", json.RawMessage(`{}`))
	want := `[{"key":"email","value":"ann@example.com"},{"key":"order","value":"A-1002"}]`
	if res.Content != want {
		t.Errorf("recall all = %s, want %s", res.Content, want)
	}
	// A second dialog has its own memory.
	other := mustSet(t, builtin.Env{})
	if res := other.Call(ctx, "recall", json.RawMessage(`{}`)); res.Content != "No notes yet." {
		t.Errorf("another dialog sees %q", res.Content)
	}
}

func TestMemoryRefusesNewKeysWhenFull(t *testing.T) {
	mem := builtin.NewMemory()
	ctx := context.Background()
	for i := range builtin.MaxMemoryKeys {
		if err := mem.Set(ctx, fmt.Sprint("k", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	if err := mem.Set(ctx, "one-more", "v"); err != builtin.ErrMemoryFull {
		t.Errorf("Set past the limit = %v, want ErrMemoryFull", err)
	}
	if err := mem.Set(ctx, "k0", "new"); err != nil {
		t.Errorf("overwriting an existing key when full = %v, want nil", err)
	}
}

func TestRegistry(t *testing.T) {
	reg := builtin.NewRegistry()
	want := []string{"cannot_answer", "current_time", "end_dialog", "handoff_to_human", "recall", "remember"}
	if got := reg.Names(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	custom := builtin.Native{
		Definition: tool.Definition{Name: "lookup_weather", Description: "Weather", Parameters: json.RawMessage(`{"type":"object"}`)},
		Bind:       func(builtin.Env) tool.Tool { return nil },
	}
	t.Run("an operator can register a new tool", func(t *testing.T) {
		if err := reg.Register(custom); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("registering a name twice is refused", func(t *testing.T) {
		if err := reg.Register(custom); err == nil || !strings.Contains(err.Error(), "already registered") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a name the model APIs reject is refused", func(t *testing.T) {
		bad := custom
		bad.Definition.Name = "has space"
		if err := reg.Register(bad); err == nil {
			t.Error("no error")
		}
	})
	t.Run("building an unknown tool names it", func(t *testing.T) {
		if _, err := reg.Build([]string{"teleport"}, builtin.Env{}); err == nil || !strings.Contains(err.Error(), `"teleport"`) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestSchemasAreGeneratedFromGoTypes(t *testing.T) {
	set := mustSet(t, builtin.Env{})
	for _, def := range set.Definitions() {
		var schema struct {
			Type                 string         `json:"type"`
			AdditionalProperties *bool          `json:"additionalProperties"`
			Properties           map[string]any `json:"properties"`
			Required             []string       `json:"required"`
		}
		if err := json.Unmarshal(def.Parameters, &schema); err != nil {
			t.Fatalf("%s: %v", def.Name, err)
		}
		if schema.Type != "object" || schema.AdditionalProperties == nil || *schema.AdditionalProperties {
			t.Errorf("%s: schema %s is not a closed object", def.Name, def.Parameters)
		}
		if def.Description == "" {
			t.Errorf("%s has no description", def.Name)
		}
	}
}
