package botconfig

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// The seed's examples, copied verbatim (testdata/seed/README.md).
const (
	seedAgent      = "testdata/seed/000-5.11.1-agent.json"
	seedMCPServers = "testdata/seed/000-5.12.3-mcp_servers.json"
)

// checkGolden compares got with the file at golden, rewriting it under
// -update.
func checkGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("differs from %s (run go test -update after checking the change):\n%s", golden, got)
	}
}

func readSeed(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestTheSeedAgentConfigFillsItsBracePlaceholders renders the seed's own
// example call (section 5.11.3): the model's {"email": "john@example.com"}
// and the system's dialog id give {"email": "john@example.com", "dialogId":
// "12345"}; the name the model did not give is left out.
func TestTheSeedAgentConfigFillsItsBracePlaceholders(t *testing.T) {
	b, err := Options{}.LoadAndCompile(readSeed(t, seedAgent))
	if err != nil {
		t.Fatalf("the seed's agent config does not load:\n%v", err)
	}
	vars := Vars{"dialog_id": "12345", "tenant_id": "67890", "chatbot_id": "optional_id"}
	var out strings.Builder
	for _, args := range []string{`{"email": "john@example.com"}`, `{"email": "john@example.com", "name": "John {Smith}"}`} {
		req, err := b.Tools[0].Endpoint.Render(json.RawMessage(args), vars)
		if err != nil {
			t.Fatalf("render %s: %v", args, err)
		}
		fmt.Fprintf(&out, "args: %s\n%s %s\n", args, req.Method, req.URL)
		for _, k := range sortedKeys(req.Header) {
			fmt.Fprintf(&out, "%s: %s\n", k, strings.Join(req.Header[k], ", "))
		}
		fmt.Fprintf(&out, "\n%s\n\n", req.Body)
	}
	checkGolden(t, "testdata/seed/000-5.11.1-requests.golden", out.String())
	checkGolden(t, "testdata/seed/000-5.11.1-prompt.golden", b.Prompt(vars))
}

// seedMCPConfig puts the seed's mcp_servers JSON, as written, into a config.
func seedMCPConfig(t *testing.T, edit func(string) string) []byte {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(readSeed(t, seedMCPServers), &doc); err != nil {
		t.Fatal(err)
	}
	servers := string(doc["mcp_servers"])
	if edit != nil {
		servers = edit(servers)
	}
	return []byte(`{"basic_settings": {"name": "Seed MCP"}, "mcp_servers": ` + servers + `}`)
}

func TestTheSeedMCPServerJSONLoads(t *testing.T) {
	// The seed sets GITHUB_TOKEN on its stdio server: an operator running it
	// allows that key (PARLEY_MCP_STDIO_ENV=GITHUB_TOKEN).
	opts := Options{Stdio: StdioPolicy{EnvKeys: []string{"GITHUB_TOKEN"}}}
	t.Run("as written, both servers are used", func(t *testing.T) {
		b, err := opts.LoadAndCompile(seedMCPConfig(t, nil))
		if err != nil {
			t.Fatalf("the seed's MCP servers do not load:\n%v", err)
		}
		got, _ := json.MarshalIndent(b.MCPServers, "", "  ")
		checkGolden(t, "testdata/seed/000-5.12.3-mcp_servers.golden", string(got)+"\n")
	})
	t.Run("a disabled server is skipped: no tools, no connection, no secret destination", func(t *testing.T) {
		disabled := func(s string) string {
			s = strings.Replace(s, `"enabled": true`, `"enabled": false`, 1)
			return strings.Replace(s, `"your-token"`, `"{{secrets.github}}"`, 1)
		}
		b, err := opts.LoadAndCompile(seedMCPConfig(t, disabled))
		if err != nil {
			t.Fatal(err)
		}
		if len(b.MCPServers) != 1 || b.MCPServers[0].Name != "browser" {
			t.Fatalf("servers = %+v, want only browser", b.MCPServers)
		}
		for _, o := range b.Offered() {
			if strings.HasPrefix(o.Name, "github__") {
				t.Errorf("the disabled server's tools are offered: %v", o)
			}
		}
		if d := b.SecretDestinations(); len(d) != 0 {
			t.Errorf("secret destinations = %v, want none while the server is disabled", d)
		}
	})
	t.Run("a server after a disabled one keeps its pointer", func(t *testing.T) {
		reorder := func(s string) string {
			return `[{"name": "off", "transport": "http", "url": "https://a.example.com", "enabled": false},
				{"name": "docs", "transport": "http", "url": "https://mcp.example.com", "headers": {"A": "{{secrets.t}}"}}]`
		}
		b, err := opts.LoadAndCompile(seedMCPConfig(t, reorder))
		if err != nil {
			t.Fatal(err)
		}
		if uses := b.SecretUses(); len(uses) != 1 || uses[0].Pointer != "/mcp_servers/1" {
			t.Fatalf("uses = %+v, want one at /mcp_servers/1", uses)
		}
	})
	t.Run("a disabled server is still validated", func(t *testing.T) {
		broken := func(s string) string {
			return strings.Replace(s, `"enabled": true`, `"enabled": false, "url": "https://x.example.com"`, 1)
		}
		_, err := opts.LoadAndCompile(seedMCPConfig(t, broken))
		ps, _ := err.(Problems)
		if !slices.ContainsFunc(ps, func(p Problem) bool { return p.Pointer == "/mcp_servers/1/url" }) {
			t.Fatalf("err = %v, want a problem at /mcp_servers/1/url", err)
		}
	})
	t.Run("without the operator's consent its env key is refused with its pointer", func(t *testing.T) {
		_, err := Options{}.LoadAndCompile(seedMCPConfig(t, nil))
		ps, _ := err.(Problems)
		if len(ps) != 1 || ps[0].Pointer != "/mcp_servers/1/env/GITHUB_TOKEN" {
			t.Fatalf("err = %v, want one problem at /mcp_servers/1/env/GITHUB_TOKEN", err)
		}
	})
}
