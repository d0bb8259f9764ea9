package mcptool_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool/mcptool"
)

func TestToolListsAreCachedUntilTheServerAnnouncesAChange(t *testing.T) {
	server := newTestServer()
	pool := newPool(t, mcptool.Options{HTTPClient: outboundClient(t, "http://127.0.0.1:1")})
	mcptool.DialInMemory(pool, func() *mcp.Server { return server })
	config := botconfig.MCPServer{Name: "shop", Transport: botconfig.TransportHTTP, URL: "http://unused.invalid/mcp"}

	if _, ok := mustTools(t, pool, config, nil)["shop__ping"]; ok {
		t.Fatal("shop__ping exists before the server added it")
	}
	mcp.AddTool(server, &mcp.Tool{Name: "ping", Description: "Answers pong"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil, nil
		})

	// The notification is asynchronous: wait for it, bounded.
	deadline := time.Now().Add(10 * time.Second)
	for {
		tools := mustTools(t, pool, config, nil)
		if _, ok := tools["shop__ping"]; ok {
			wantContent(t, mustCall(t, tools, "shop__ping", `{}`), false, "pong")
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the tool list was not refreshed after notifications/tools/list_changed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := pool.Stats().Connects; got != 1 {
		t.Errorf("Connects = %d, want 1: a list change needs no reconnect", got)
	}
}

func TestLongResultsAreCutAndMarked(t *testing.T) {
	pool := newPool(t, mcptool.Options{HTTPClient: outboundClient(t, "http://127.0.0.1:1"), MaxResultBytes: 64})
	mcptool.DialInMemory(pool, newTestServer)
	tools := mustTools(t, pool, botconfig.MCPServer{Name: "shop", Transport: botconfig.TransportHTTP, URL: "http://unused.invalid/mcp"}, nil)

	res := mustCall(t, tools, "shop__echo", `{"message":"`+strings.Repeat("é", 100)+`"}`)
	if !res.Meta.Truncated {
		t.Error("Meta.Truncated is false for a cut result")
	}
	wantContent(t, res, false, "[truncated: 64 of 206 bytes shown]")
	if !strings.HasPrefix(res.Content, "echo: ééé") {
		t.Errorf("content %q lost its beginning", res.Content)
	}
}
