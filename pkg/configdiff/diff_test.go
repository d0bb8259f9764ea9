package configdiff_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/configdiff"
)

func TestCompareListsChangesByPointer(t *testing.T) {
	from := `{"basic_settings": {"name": "Acme", "tone": "dry"}, "native_tools": ["current_time"], "llm": {"temperature": 0.3}, "a/b": 1}`
	to := `{"basic_settings": {"name": "Acme", "greeting": "Hi"}, "native_tools": ["current_time", "handoff_to_human"], "llm": {"temperature": 0.30}, "a/b": 2}`
	d, err := configdiff.Compare([]byte(from), []byte(to), "v1", "v2")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(d.Changes)
	want := `[{"op":"replace","pointer":"/a~1b","from":1,"to":2},` +
		`{"op":"add","pointer":"/basic_settings/greeting","to":"Hi"},` +
		`{"op":"remove","pointer":"/basic_settings/tone","from":"dry"},` +
		`{"op":"add","pointer":"/native_tools/1","to":"handoff_to_human"}]`
	// 0.3 and 0.30 are the same number: no change.
	if string(got) != want {
		t.Fatalf("changes = %s\nwant      %s", got, want)
	}
	for _, line := range []string{"--- v1", "+++ v2", `-    "tone": "dry"`, `+    "greeting": "Hi",`, `+    "handoff_to_human"`} {
		if !strings.Contains(d.Unified, line+"\n") {
			t.Errorf("unified diff lacks %q:\n%s", line, d.Unified)
		}
	}
}

func TestCompareEqualDocuments(t *testing.T) {
	d, err := configdiff.Compare([]byte(`{"a": [1, {"b": 2}]}`), []byte(`{"a":[1,{"b":2}]}`), "x", "y")
	if err != nil || len(d.Changes) != 0 || d.Unified != "" {
		t.Fatalf("diff = %+v, %v", d, err)
	}
}

func TestCompareWithAnEmptySideAddsEverything(t *testing.T) {
	d, err := configdiff.Compare(nil, []byte(`{"a": 1}`), "live", "local")
	if err != nil || len(d.Changes) != 1 || d.Changes[0].Op != "add" || d.Changes[0].Pointer != "" {
		t.Fatalf("diff = %+v, %v", d, err)
	}
	if !strings.Contains(d.Unified, "@@ -1,0 +1,3 @@") {
		t.Fatalf("unified = %s", d.Unified)
	}
}

func TestUnifiedHunksKeepThreeLinesOfContext(t *testing.T) {
	var a, b []string
	for i := 0; i < 20; i++ {
		a = append(a, string(rune('a'+i)))
		b = append(b, string(rune('a'+i)))
	}
	b[2], b[17] = "C", "R"
	got := configdiff.Unified(strings.Join(a, "\n")+"\n", strings.Join(b, "\n")+"\n", "x", "y")
	want := "--- x\n+++ y\n@@ -1,6 +1,6 @@\n a\n b\n-c\n+C\n d\n e\n f\n@@ -15,6 +15,6 @@\n o\n p\n q\n-r\n+R\n s\n t\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestCompareRejectsNonJSON(t *testing.T) {
	if _, err := configdiff.Compare([]byte(`{`), []byte(`{}`), "v1", "v2"); err == nil || !strings.Contains(err.Error(), "v1") {
		t.Fatalf("err = %v", err)
	}
}
