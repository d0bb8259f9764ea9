package mcptool_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool"
)

func TestMCPToolsJoinADialogsToolSet(t *testing.T) {
	tools := mustTools(t, inMemoryPool(t), botconfig.MCPServer{Name: "shop", Transport: botconfig.TransportHTTP, URL: "http://unused.invalid/mcp"}, nil)
	list := make([]tool.Tool, 0, len(tools))
	for _, tl := range tools {
		list = append(list, tl)
	}
	set, err := tool.NewSet(nil, list...)
	if err != nil {
		t.Fatalf("NewSet rejected the MCP tools: %v", err)
	}
	ctx := context.Background()
	t.Run("a valid call reaches the server", func(t *testing.T) {
		wantContent(t, set.Call(ctx, "shop__add", json.RawMessage(`{"a":1,"b":2}`)), false, "3")
	})
	t.Run("the server's schema validates arguments before any call", func(t *testing.T) {
		wantContent(t, set.Call(ctx, "shop__add", json.RawMessage(`{"a":"one"}`)), true, "invalid arguments")
	})
}
