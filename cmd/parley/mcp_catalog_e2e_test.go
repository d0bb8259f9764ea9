package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// everythingServer is the reference MCP server .ci/install-mcp.sh installs,
// or a skip.
func everythingServer(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join("..", "..", ".ci", "node", "node_modules", ".bin", "mcp-server-everything"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skip("@modelcontextprotocol/server-everything is not installed: run .ci/install-mcp.sh")
	}
	return bin
}

// TestAModelReadsAnMCPResourceAndGetsAPromptThroughTheRealProgram runs
// server-everything over stdio for a bot whose config turns on its
// resources and prompts: the model is offered them as tools, and what it
// reads and gets is in its next request.
func TestAModelReadsAnMCPResourceAndGetsAPromptThroughTheRealProgram(t *testing.T) {
	t.Parallel()
	bin := everythingServer(t)
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		llm := chatServer(t, env, llmtest.Options{})
		argv, _ := json.Marshal([][]string{{bin, "stdio"}})
		env["PARLEY_MCP_STDIO_ALLOW"] = string(argv)
		env["PATH"] = os.Getenv("PATH") // the server is a node script
		env["HOME"] = t.TempDir()
		srv := startParley(t, env)
		ctx := context.Background()
		created, err := apiclient.New(srv.URL, e2eToken).CreateTenant(ctx, apiclient.CreateTenantRequest{Slug: "acme", Name: "Acme"})
		if err != nil {
			t.Fatal(err)
		}
		admin := apiclient.New(srv.URL, created.APIKey.Key)
		config := `{"basic_settings": {"name": "Docs"}, "llm": {"model": "gpt-4o-mini"},
  "mcp_servers": [{"name": "everything", "transport": "stdio", "command": ` + jsonString(bin) + `, "args": ["stdio"],
    "tools": {"allow": ["echo"]}, "resources": true, "prompts": true}],
  "action_books": [{"condition": "When asked about features", "action": "Read the features document", "tools": ["everything__read_resource"]}]}`
		if _, err := admin.CreateBot(ctx, "acme", "docs", json.RawMessage(config)); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Publish(ctx, "acme", "docs", 1); err != nil {
			t.Fatal(err)
		}
		d, err := admin.CreateDialog(ctx, "acme", "docs", apiclient.CreateDialogRequest{})
		if err != nil {
			t.Fatal(err)
		}
		llm.Enqueue(
			llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{Name: "everything__read_resource", Arguments: `{"uri":"demo://resource/static/document/features.md"}`}}},
			llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{Name: "everything__get_prompt", Arguments: `{"name":"args-prompt","arguments":{"city":"Oslo"}}`}}},
			llmtest.ServerReply{Text: "Done."},
		)
		if _, err := admin.SendMessage(ctx, "acme", d.ID, "what can the server do?"); err != nil {
			t.Fatal(err)
		}
		reqs := llm.Requests()
		first := reqs[len(reqs)-3].Request
		var offered []string
		for _, tl := range first.Tools {
			offered = append(offered, tl.Function.Name)
		}
		if got := strings.Join(offered, ","); got != "everything__echo,everything__list_resources,everything__read_resource,everything__get_prompt" {
			t.Fatalf("tools offered: %s", got)
		}
		last := llm.LastRequest().Messages
		resource, prompt := last[len(last)-3].Text(), last[len(last)-1].Text()
		if !strings.Contains(resource, "# Everything Server - Features") {
			t.Errorf("the resource the model read: %.200q", resource)
		}
		if !strings.Contains(prompt, "What's weather in Oslo?") {
			t.Errorf("the prompt the model got: %q", prompt)
		}
	})
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
