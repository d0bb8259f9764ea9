package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

func TestVersionsCompareByPointerAndAsText(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		cl := e.client(e.mustCreateTenant(t, "acme"))
		ctx := context.Background()
		if _, err := cl.CreateBot(ctx, "acme", "helper", json.RawMessage(`{"basic_settings": {"name": "Helper", "tone": "dry"}, "native_tools": ["current_time"]}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.CreateVersion(ctx, "acme", "helper", json.RawMessage(`{"basic_settings": {"name": "Helper", "greeting": "Hi!"}, "native_tools": ["current_time", "handoff_to_human"]}`)); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name    string
			n, m    int
			changes []string
			lines   []string
		}{
			{"from the older to the newer", 1, 2,
				[]string{"add /basic_settings/greeting", "remove /basic_settings/tone", "add /native_tools/1"},
				[]string{"--- version 1", "+++ version 2", `-    "tone": "dry"`, `+    "greeting": "Hi!",`, `+    "handoff_to_human"`}},
			{"the other way round", 2, 1,
				[]string{"remove /basic_settings/greeting", "add /basic_settings/tone", "remove /native_tools/1"},
				[]string{"--- version 2", "+++ version 1"}},
			{"a version with itself has no changes", 2, 2, nil, nil},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				d, err := cl.DiffVersions(ctx, "acme", "helper", tc.n, tc.m)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, c := range d.Changes {
					got = append(got, c.Op+" "+c.Pointer)
				}
				if strings.Join(got, ",") != strings.Join(tc.changes, ",") {
					t.Fatalf("changes = %v, want %v", got, tc.changes)
				}
				for _, l := range tc.lines {
					if !strings.Contains(d.Unified, l+"\n") {
						t.Errorf("unified lacks %q:\n%s", l, d.Unified)
					}
				}
				if tc.lines == nil && d.Unified != "" {
					t.Errorf("unified = %q, want empty", d.Unified)
				}
			})
		}
		t.Run("a version that does not exist is not found", func(t *testing.T) {
			_, err := cl.DiffVersions(ctx, "acme", "helper", 1, 9)
			apiError(t, err, apiclient.CodeNotFound)
		})
	})
}

// TestAVersionDiffShowsTextAsWritten: the unified diff is text for people,
// so &, < and > read as written, not as the \u0026, \u003c and \u003e
// that encoding/json writes to keep JSON safe inside HTML.
func TestAVersionDiffShowsTextAsWritten(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		cl := e.client(e.mustCreateTenant(t, "acme"))
		ctx := context.Background()
		if _, err := cl.CreateBot(ctx, "acme", "helper", json.RawMessage(`{"basic_settings": {"name": "Helper"}}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.CreateVersion(ctx, "acme", "helper", json.RawMessage(`{"basic_settings": {"name": "Helper", "greeting": "Fish & chips <3 -> yes"}}`)); err != nil {
			t.Fatal(err)
		}
		d, err := cl.DiffVersions(ctx, "acme", "helper", 1, 2)
		if err != nil {
			t.Fatal(err)
		}
		if want := `+    "greeting": "Fish & chips <3 -> yes",`; !strings.Contains(d.Unified, want+"\n") {
			t.Errorf("unified lacks %q:\n%s", want, d.Unified)
		}
	})
}
