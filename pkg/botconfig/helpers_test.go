package botconfig

import (
	"errors"
	"strings"
	"testing"
)

// doc builds a config document with the given top-level members after a
// minimal valid basic_settings.
func doc(members ...string) string {
	parts := append([]string{`"basic_settings": {"name": "Test Bot"}`}, members...)
	return "{" + strings.Join(parts, ",\n") + "}"
}

// loadProblems loads data and returns its problems, failing the test if the
// error is not a Problems.
func loadProblems(t *testing.T, data string) Problems {
	t.Helper()
	_, err := Load([]byte(data))
	if err == nil {
		return nil
	}
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Load returned %T (%v), want Problems", err, err)
	}
	return ps
}

// stdioTestOptions lets the stdio MCP servers of test configs set TOKEN, as
// an operator's PARLEY_MCP_STDIO_ENV=TOKEN would.
var stdioTestOptions = Options{Stdio: StdioPolicy{EnvKeys: []string{"TOKEN"}}}

// mustLoad loads a config that must be valid.
func mustLoad(t testing.TB, data string) *Config {
	t.Helper()
	cfg, err := stdioTestOptions.Load([]byte(data))
	if err != nil {
		t.Fatalf("Load: %v\nconfig:\n%s", err, data)
	}
	return cfg
}

// mustCompile loads and compiles a config that must be valid.
func mustCompile(t testing.TB, data string) *Bot {
	t.Helper()
	b, err := stdioTestOptions.Compile(mustLoad(t, data))
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return b
}

// toolDoc is a config with one server tool using the given parameters and
// endpoint, plus the given extra members.
func toolDoc(params, endpoint string, extra ...string) string {
	tool := `"tools": [{"name": "t", "description": "test tool", "parameters": ` + params + `, "endpoint": ` + endpoint + `}]`
	return doc(append([]string{tool}, extra...)...)
}

// mustTemplate compiles a one-tool config and returns the tool's endpoint.
func mustTemplate(t testing.TB, params, endpoint string, extra ...string) *EndpointTemplate {
	t.Helper()
	b := mustCompile(t, toolDoc(params, endpoint, extra...))
	return b.Tools[0].Endpoint
}
