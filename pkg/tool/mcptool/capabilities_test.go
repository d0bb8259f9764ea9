package mcptool_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool/mcptool"
)

func TestServersAreOfferedNoClientCapabilities(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "curious", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "caps", Description: "Reports the client's capabilities"},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			caps := req.Session.InitializeParams().Capabilities
			offered, _ := json.Marshal(map[string]bool{
				//lint:ignore SA1019 the test checks that Parley offers no roots, deprecated or not.
				"roots": caps.RootsV2 != nil,
				//lint:ignore SA1019 the test checks that Parley offers no sampling, deprecated or not.
				"sampling":    caps.Sampling != nil,
				"elicitation": caps.Elicitation != nil,
			})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(offered)}}}, nil, nil
		})
	pool := newPool(t, mcptool.Options{HTTPClient: outboundClient(t, "http://127.0.0.1:1")})
	mcptool.DialInMemory(pool, func() *mcp.Server { return server })
	tools := mustTools(t, pool, botconfig.MCPServer{Name: "curious", Transport: botconfig.TransportHTTP, URL: "http://unused.invalid/mcp"}, nil)

	res := mustCall(t, tools, "curious__caps", `{}`)
	want := `{"elicitation":false,"roots":false,"sampling":false}`
	if res.IsError || res.Content != want {
		t.Errorf("the server was offered %s, want %s", res.Content, want)
	}
}
