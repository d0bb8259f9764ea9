package botconfig

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadRejectsDocumentsThatAreNotOneConfigObject(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string // substring of the single root problem
	}{
		{"a missing comma reports line and column", "{\n  \"basic_settings\": {\n    \"name\": \"x\"\n    \"tone\": \"y\"\n  }\n}", "line 4, column 5"},
		{"a trailing comma reports line and column", "{\n \"basic_settings\": {\"name\": \"x\",}\n}", "line 2, column 33"},
		{"an unclosed object reports the end of input", "{\n \"basic_settings\": {\"name\": \"x\"}\n", "line 3, column 1: unexpected end of input"},
		{"trailing garbage after the object is rejected", "{\"basic_settings\": {\"name\": \"x\"}}\n{}", "unexpected data after the config at line 2, column 1"},
		{"an empty file is rejected", "  \n", "config is empty"},
		{"an array is not a config", "[]", "must be a JSON object"},
		{"a string is not a config", `"hello"`, "must be a JSON object"},
		{"an error on the first line reports column 1 for the first byte", "x", "line 1, column 1"},
		{"hostile nesting is refused before it costs recursion", `{"a": ` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, "nests more than 64 levels deep at line 1, column 70"},
		{"a document over the size cap is rejected", `{"basic_settings": {"name": "x", "background": "` + strings.Repeat("a", MaxConfigSize) + `"}}`, "larger than 1024 KiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := loadProblems(t, tt.data)
			if len(ps) != 1 || ps[0].Pointer != "" || !strings.Contains(ps[0].Message, tt.want) {
				t.Fatalf("problems = %v, want one root problem containing %q", ps, tt.want)
			}
		})
	}
}

func TestLoadReportsEveryProblemAtOnceSortedByPointer(t *testing.T) {
	data := `{
  "basic_settings": {"name": "x", "colour": "red"},
  "tools": [
    {"name": "a b", "description": "d", "endpoint": {"url": "https://api.example.com/<missing>"}}
  ],
  "action_books": [{"condition": "c", "action": "a", "tools": ["nope"]}],
  "runtime": {"max_turns": "eight"}
}`
	ps := loadProblems(t, data)
	var got []string
	for _, p := range ps {
		got = append(got, p.Pointer)
	}
	want := []string{"/action_books/0/tools/0", "/basic_settings/colour", "/runtime/max_turns", "/tools/0/endpoint/url", "/tools/0/name"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("pointers = %v, want %v\nproblems:\n%v", got, want, ps)
	}
}

func TestLoadRejectsDuplicateKeys(t *testing.T) {
	ps := loadProblems(t, `{"basic_settings": {"name": "a", "name": "b"}, "runtime": {"max_turns": 3}, "runtime": {}}`)
	want := Problems{
		{"/basic_settings/name", `key "name" appears twice in this object; keep one (the last would silently win)`},
		{"/runtime", `key "runtime" appears twice in this object; keep one (the last would silently win)`},
	}
	if len(ps) != len(want) || ps[0] != want[0] || ps[1] != want[1] {
		t.Fatalf("problems = %v, want %v", ps, want)
	}
}

func TestLoadAcceptsTheMinimalConfig(t *testing.T) {
	cfg := mustLoad(t, `{"basic_settings": {"name": "Tiny"}}`)
	if cfg.BasicSettings.Name != "Tiny" {
		t.Fatalf("name = %q", cfg.BasicSettings.Name)
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	t.Run("a valid file loads", func(t *testing.T) {
		path := filepath.Join(dir, "ok.json")
		os.WriteFile(path, []byte(`{"basic_settings": {"name": "File"}}`), 0o600)
		if _, err := LoadFile(path); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a missing file is a plain error, not Problems", func(t *testing.T) {
		_, err := LoadFile(filepath.Join(dir, "missing.json"))
		var ps Problems
		if err == nil || errors.As(err, &ps) || !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("err = %v, want a not-exist error", err)
		}
	})
	t.Run("an oversized file is a problem, not a truncated parse", func(t *testing.T) {
		path := filepath.Join(dir, "big.json")
		os.WriteFile(path, []byte(`{"basic_settings": {"name": "`+strings.Repeat("a", MaxConfigSize)+`"}}`), 0o600)
		_, err := LoadFile(path)
		if err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Fatalf("err = %v, want the size problem", err)
		}
	})
}

func TestProblemsErrorShowsTheRootPointerAsSlash(t *testing.T) {
	ps := Problems{{"", "bad"}, {"/tools/0", "worse"}}
	if got, want := ps.Error(), "/: bad\n/tools/0: worse"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}

func TestProblemsEncodeAsAPIDetails(t *testing.T) {
	got, err := json.Marshal(Problems{{"/tools/0/name", "bad name"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"pointer":"/tools/0/name","message":"bad name"}]`; string(got) != want {
		t.Fatalf("JSON = %s, want %s", got, want)
	}
}

func TestProblemsSortIndexesNumerically(t *testing.T) {
	ps := Problems{{"/tools/10/name", "a"}, {"/tools/9/name", "b"}, {"/basic_settings", "c"}, {"/tools/9/name", "b"}}
	got := ps.sorted()
	want := Problems{{"/basic_settings", "c"}, {"/tools/9/name", "b"}, {"/tools/10/name", "a"}}
	if len(got) != len(want) {
		t.Fatalf("sorted = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sorted = %v, want %v", got, want)
		}
	}
}

func TestPointerEscapesTildeAndSlash(t *testing.T) {
	if got, want := ptr("/headers", "a/b~c"), "/headers/a~1b~0c"; got != want {
		t.Fatalf("ptr = %q, want %q", got, want)
	}
}
