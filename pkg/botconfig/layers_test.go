package botconfig_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestBotconfigImportsNoHigherLayer: the tools (pkg/tool and its
// implementations), the loop and the application build on compiled
// configs, so botconfig may depend on none of them, even through
// another package (README, "Package map").
func TestBotconfigImportsNoHigherLayer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const module = "github.com/parleyhq/parley/"
	allowed := []string{"configs", "pkg/botconfig", "pkg/guardrail", "pkg/llm", "pkg/pii", "pkg/redact", "pkg/schemaref"}
	for _, dep := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(dep, module)
		if !ok {
			continue
		}
		if !slices.Contains(allowed, rel) {
			t.Errorf("botconfig depends on %s", rel)
		}
	}
}
