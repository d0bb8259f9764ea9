package bottest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/parleyhq/parley/pkg/bottest"
)

// FuzzParse checks that any input either parses into a suite whose
// expectations are usable (regexps compile, names are set) or is refused
// with problems, never a panic.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../../tenants/*/tests/*.json")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"tests": [{"name": "x", "turns": [{"user": "hi", "expect": {"reply_matches": ["("]}}]}]}`))
	f.Add([]byte(`{"fixtures": {"a/b~": {"result": 1}}, "tests": []}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := bottest.Parse(data)
		if err != nil {
			if s != nil {
				t.Fatalf("a refused file also returned a suite")
			}
			return
		}
		if len(s.Tests) == 0 {
			t.Fatalf("a parsed suite has no tests")
		}
		for _, c := range s.Tests {
			if c.Name == "" || len(c.Turns) == 0 {
				t.Fatalf("a parsed test lacks a name or turns: %+v", c)
			}
		}
	})
}
