package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// runParley runs the program in-process and returns its exit code and output.
func runValidateCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
	code = m.Run(context.Background(), args)
	return code, out.String(), errOut.String()
}

func writeValidateFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestValidateExampleTenantsExitZero(t *testing.T) {
	bots, _ := filepath.Glob("../../tenants/*/bots/*.json")
	if len(bots) == 0 {
		t.Fatal("no example bots")
	}
	code, out, errOut := runValidateCmd(t, append([]string{"validate"}, bots...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if strings.Count(out, ": ok\n") != len(bots) {
		t.Fatalf("output = %q, want one ok line per file", out)
	}
}

func TestValidateReportsProblemsPerFile(t *testing.T) {
	dir := t.TempDir()
	good := writeValidateFile(t, dir, "good.json", `{"basic_settings": {"name": "Good"}}`)
	bad := writeValidateFile(t, dir, "bad.json", `{"basic_settings": {"name": "Bad", "colour": 1}, "action_books": [{"condition": "c", "action": "a", "tools": ["x"]}]}`)
	broken := writeValidateFile(t, dir, "broken.json", "{\n  \"basic_settings\": \n}")
	missing := filepath.Join(dir, "missing.json")

	tests := []struct {
		name  string
		files []string
		code  int
		lines []string
	}{
		{"a valid file prints ok and exits 0", []string{good}, 0, []string{good + ": ok"}},
		{"an invalid file prints FILE: POINTER: message and exits 1", []string{good, bad}, 1, []string{
			good + ": ok",
			bad + `: /action_books/0/tools/0: unknown tool "x" in action book; declare it in tools, native_tools, agents or mcp_servers`,
			bad + `: /basic_settings/colour: unknown field "colour"; check its spelling or remove it (see configs/agent-config.schema.json)`,
		}},
		{"malformed JSON shows the root as / with line and column", []string{broken}, 1, []string{
			broken + ": /: invalid JSON at line 3, column 1: invalid character '}' looking for beginning of value",
		}},
		{"an unreadable file is reported, not fatal", []string{missing, good}, 1, []string{
			missing + ": /: open " + missing + ": no such file or directory",
			good + ": ok",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, _ := runValidateCmd(t, append([]string{"validate"}, tt.files...)...)
			want := strings.Join(tt.lines, "\n") + "\n"
			if code != tt.code || out != want {
				t.Fatalf("exit %d, output:\n%s\nwant exit %d, output:\n%s", code, out, tt.code, want)
			}
		})
	}
}

func TestValidateJSON(t *testing.T) {
	dir := t.TempDir()
	good := writeValidateFile(t, dir, "good.json", `{"basic_settings": {"name": "Good <3"}, "native_tools": ["current_time"],
	  "tools": [{"name": "c", "description": "client tool", "execution": "client"}],
	  "mcp_servers": [{"name": "docs", "transport": "http", "url": "https://mcp.example.com", "tools": {"allow": ["search", "drop"], "deny": ["drop"]}},
	                  {"name": "all", "transport": "sse", "url": "https://mcp.example.com"}]}`)
	bad := writeValidateFile(t, dir, "bad.json", `{"basic_settings": {}}`)
	code, out, _ := runValidateCmd(t, "validate", "--json", good, bad)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	var results []struct {
		File   string `json:"file"`
		Valid  bool   `json:"valid"`
		Errors []struct {
			Pointer string `json:"pointer"`
			Message string `json:"message"`
		} `json:"errors"`
		Prompt string `json:"prompt"`
		Tools  []struct {
			Name string `json:"name"`
			Kind string `json:"kind"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &results); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if len(results) != 2 {
		t.Fatalf("results = %+v", results)
	}
	g, b := results[0], results[1]
	var tools []string
	for _, tl := range g.Tools {
		tools = append(tools, tl.Kind+":"+tl.Name)
	}
	if g.File != good || !g.Valid || len(g.Errors) != 0 || !strings.Contains(g.Prompt, "You are Good <3.") ||
		strings.Join(tools, " ") != "client:c native:current_time mcp:docs__search mcp:all__*" {
		t.Errorf("valid result = %+v, tools %v", g, tools)
	}
	if strings.Contains(out, `\u003c`) {
		t.Errorf("output escapes HTML characters, which makes prompts unreadable:\n%s", out)
	}
	if b.File != bad || b.Valid || len(b.Errors) != 1 || b.Errors[0].Pointer != "/basic_settings/name" || b.Prompt != "" {
		t.Errorf("invalid result = %+v", b)
	}
	if !strings.Contains(out, `"errors": []`) {
		t.Errorf("a valid file's errors should be [] not null:\n%s", out)
	}
}

func TestValidatePrintPrompt(t *testing.T) {
	dir := t.TempDir()
	a := writeValidateFile(t, dir, "a.json", `{"basic_settings": {"name": "Alpha"}}`)
	b := writeValidateFile(t, dir, "b.json", `{"basic_settings": {"name": "Beta"}}`)
	t.Run("one file prints just its prompt", func(t *testing.T) {
		code, out, _ := runValidateCmd(t, "validate", "--print-prompt", a)
		if code != 0 || !strings.HasPrefix(out, "## Identity\nYou are Alpha.") || strings.Contains(out, ": ok") {
			t.Fatalf("exit %d, output:\n%s", code, out)
		}
	})
	t.Run("several files get a header each", func(t *testing.T) {
		code, out, _ := runValidateCmd(t, "validate", "--print-prompt", a, b)
		if code != 0 || !strings.Contains(out, "==> "+a+" <==\n## Identity\nYou are Alpha.") || !strings.Contains(out, "==> "+b+" <==\n## Identity\nYou are Beta.") {
			t.Fatalf("exit %d, output:\n%s", code, out)
		}
	})
}

func TestValidateUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no files is a usage error", []string{"validate"}, 2, "usage: parley validate"},
		{"an unknown flag is a usage error", []string{"validate", "--yaml", "x.json"}, 2, "flag provided but not defined"},
		{"--help prints usage and exits 0", []string{"validate", "--help"}, 0, "--print-prompt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runValidateCmd(t, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and %q", code, errOut, tt.code, tt.want)
			}
		})
	}
}

func TestValidateWarnsOfModelsTheServersProviderDoesNotList(t *testing.T) {
	dir := t.TempDir()
	file := writeValidateFile(t, dir, "bot.json", `{"basic_settings": {"name": "B"}, "llm": {"model": "llama-of-my-own"}}`)
	run := func(env parleyEnv) string {
		var out bytes.Buffer
		m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Getenv: env.getenv}
		if code := m.Run(context.Background(), []string{"validate", file}); code != 0 {
			t.Fatalf("exit %d: %s", code, out.String())
		}
		return out.String()
	}
	if out := run(parleyEnv{}); !strings.Contains(out, file+`: /llm/model: warning: model "llama-of-my-own" is not among the default provider's models (`) {
		t.Errorf("on OpenAI's public API (the default settings): %q, want a warning at /llm/model", out)
	}
	if out := run(parleyEnv{"PARLEY_LLM_BASE_URL": "http://127.0.0.1:11434/v1"}); out != file+": ok\n" {
		t.Errorf("on a private server: %q, want only ok (it has no model list)", out)
	}
}

// TestValidateRefusesAPortNoServerHas: a URL whose port is above 65535,
// 0 or not a number passed validation and failed only when the tool was
// called. parley validate names it with its pointer.
func TestValidateRefusesAPortNoServerHas(t *testing.T) {
	tool := func(url string) string {
		return `{"basic_settings": {"name": "Ports"}, "tools": [{"name": "t", "description": "d", "endpoint": {"url": "` + url + `"}}]}`
	}
	mcp := func(url string) string {
		return `{"basic_settings": {"name": "Ports"}, "mcp_servers": [{"name": "m", "transport": "http", "url": "` + url + `"}]}`
	}
	tests := []struct {
		name, config, want string
	}{
		{"a tool's port above 65535", tool("https://api.example.com:65536/orders"), "/tools/0/endpoint/url: "},
		{"a tool's port far above 65535", tool("https://api.example.com:99999/orders"), "/tools/0/endpoint/url: "},
		{"a tool's port 0", tool("https://api.example.com:0/orders"), "/tools/0/endpoint/url: "},
		{"a tool's port that is not a number", tool("https://api.example.com:https/orders"), "/tools/0/endpoint/url: "},
		{"an MCP server's port above 65535", mcp("https://mcp.example.com:70000/mcp"), "/mcp_servers/0/url: "},
		{"an MCP server's port 0", mcp("https://mcp.example.com:0/mcp"), "/mcp_servers/0/url: "},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name+" is refused with its pointer", func(t *testing.T) {
			file := writeValidateFile(t, dir, "bot"+strconv.Itoa(i)+".json", tt.config)
			code, out, _ := runValidateCmd(t, "validate", file)
			if code != 1 || !strings.Contains(out, file+": "+tt.want) || !strings.Contains(out, "port") {
				t.Errorf("exit %d, output:\n%s\nwant exit 1 and %q about the port", code, out, tt.want)
			}
		})
	}
	t.Run("the highest port is valid", func(t *testing.T) {
		file := writeValidateFile(t, dir, "max.json", tool("https://api.example.com:65535/orders"))
		if code, out, _ := runValidateCmd(t, "validate", file); code != 0 {
			t.Errorf("exit %d, output:\n%s", code, out)
		}
	})
}
