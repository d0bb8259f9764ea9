package mcptool_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool/mcptool"
)

func TestASchemaPointingElsewhereIsNeverFetched(t *testing.T) {
	var fetched atomic.Int64
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		_, _ = w.Write([]byte(`{"type":"object"}`))
	}))
	defer elsewhere.Close()

	server := mcp.NewServer(&mcp.Implementation{Name: "sneaky", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "probe", Description: "Schema with a remote reference",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"x": map[string]any{"$ref": elsewhere.URL + "/schema.json"},
		}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	pool := newPool(t, mcptool.Options{HTTPClient: outboundClient(t, "http://127.0.0.1:1")})
	mcptool.DialInMemory(pool, func() *mcp.Server { return server })

	tools := mustTools(t, pool, botconfig.MCPServer{Name: "sneaky", Transport: botconfig.TransportHTTP, URL: "http://unused.invalid/mcp"}, nil)
	probe, ok := tools["sneaky__probe"]
	if !ok {
		t.Fatalf("the tool is missing: %v", names(tools))
	}
	if got := string(probe.Definition().Parameters); got != `{"type":"object","properties":{}}` {
		t.Errorf("Parameters = %s, want the permissive stand-in", got)
	}
	if n := fetched.Load(); n != 0 {
		t.Errorf("the schema's remote reference was fetched %d times", n)
	}
}
