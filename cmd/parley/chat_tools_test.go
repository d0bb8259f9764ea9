package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// TestChatUsesNativeHTTPAndMCPToolsInOneConversation drives one conversation
// whose turn calls a native tool, a config HTTP tool and an MCP server's tool,
// each real: an httptest endpoint and a Go SDK MCP server over streamable HTTP,
// reached through the outbound client with a loopback exception.
func TestChatUsesNativeHTTPAndMCPToolsInOneConversation(t *testing.T) {
	t.Parallel()
	orders := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"order": %q, "status": "shipped"}`, strings.TrimPrefix(r.URL.Path, "/orders/"))
	}))
	defer orders.Close()
	type searchArgs struct {
		Query string `json:"query"`
	}
	docs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "search", Description: "Search the help center"},
			func(ctx context.Context, req *mcp.CallToolRequest, args searchArgs) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Returns are free within 30 days (" + args.Query + ")"}}}, nil, nil
			})
		return s
	}, nil))
	defer docs.Close()
	portOf := func(u string) string { return u[strings.LastIndex(u, ":")+1:] }

	config := `{
  "basic_settings": {"name": "Mixed Bot"},
  "tools": [{"name": "get_order", "description": "Look up an order",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
    "endpoint": {"url": "` + orders.URL + `/orders/<order_id>"}}],
  "native_tools": ["current_time"],
  "mcp_servers": [{"name": "docs", "transport": "http", "url": "` + docs.URL + `"}]
}`
	srv := llmtest.NewServer(t, llmtest.Options{APIKey: "sk-chat-test"})
	srv.Enqueue(
		llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{
			{ID: "n1", Name: "current_time", Arguments: `{}`},
			{ID: "h1", Name: "get_order", Arguments: `{"order_id":"A-17"}`},
			{ID: "m1", Name: "docs__search", Arguments: `{"query":"returns"}`},
		}},
		llmtest.ServerReply{Text: "A-17 has shipped, and returns are free within 30 days."},
	)
	env := map[string]string{
		"PARLEY_LLM_BASE_URL": srv.URL(), "PARLEY_LLM_API_KEY": "sk-chat-test",
		"PARLEY_OUTBOUND_ALLOW": "127.0.0.1/32", "PARLEY_OUTBOUND_PORTS": portOf(orders.URL) + "," + portOf(docs.URL),
	}
	path := filepath.Join(t.TempDir(), "bot.json")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	m := &Main{Stdin: strings.NewReader("Where is order A-17, and can I return it?\n"), Stdout: &out, Stderr: &errOut,
		Getenv: func(k string) string { return env[k] }}
	if code := m.Run(context.Background(), []string{"chat", "--config", path, "--json"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	stdout := out.String()

	results := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var ev struct {
			Type    string `json:"type"`
			ID      string `json:"id"`
			Content string `json:"content"`
			IsError bool   `json:"is_error"`
			Text    string `json:"text"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("stdout line is not JSON: %q", line)
		}
		if ev.Type == "tool_result" {
			if ev.IsError {
				t.Fatalf("tool %s failed: %s", ev.ID, ev.Content)
			}
			results[ev.ID] = ev.Content
		}
		if ev.Type == "done" && ev.Text != "A-17 has shipped, and returns are free within 30 days." {
			t.Errorf("done text = %q", ev.Text)
		}
	}
	if !strings.Contains(results["n1"], `"weekday"`) {
		t.Errorf("native current_time result = %q", results["n1"])
	}
	if results["h1"] != `{"order":"A-17","status":"shipped"}` {
		t.Errorf("HTTP get_order result = %q", results["h1"])
	}
	if results["m1"] != "Returns are free within 30 days (returns)" {
		t.Errorf("MCP docs__search result = %q", results["m1"])
	}
	// The model saw all three kinds, and got every result back in call order.
	second := srv.Requests()[1].Request
	var names []string
	for _, tl := range srv.Requests()[0].Request.Tools {
		names = append(names, tl.Function.Name)
	}
	if got := strings.Join(names, ","); got != "get_order,current_time,docs__search" {
		t.Errorf("tools sent to the model = %s", got)
	}
	var order []string
	for _, m := range second.Messages {
		if m.Role == "tool" {
			order = append(order, m.ToolCallID)
		}
	}
	if got := strings.Join(order, ","); got != "n1,h1,m1" {
		t.Errorf("tool results sent back in order %s, want n1,h1,m1", got)
	}
}
