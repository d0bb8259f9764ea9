package mcptool_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool/mcptool"
)

// BenchmarkCallOverStreamableHTTP measures what one MCP tool call costs the
// loop over a pooled streamable HTTP session on loopback, through the
// outbound client: JSON-RPC framing, HTTP round trip and result rendering.
func BenchmarkCallOverStreamableHTTP(b *testing.B) {
	srv := startHTTPServer(b, false)
	pool := newPool(b, mcptool.Options{HTTPClient: outboundClient(b, srv.URL)})
	benchEcho(b, pool, srv.URL)
}

// BenchmarkCallInMemory is the same call without the network, to separate
// the SDK's and this package's cost from HTTP's.
func BenchmarkCallInMemory(b *testing.B) {
	benchEcho(b, inMemoryPool(b), "http://unused.invalid/mcp")
}

// benchEcho calls the server's echo tool through pool, b.N times.
func benchEcho(b *testing.B, pool *mcptool.Pool, url string) {
	tools := mustTools(b, pool, botconfig.MCPServer{Name: "shop", Transport: botconfig.TransportHTTP, URL: url}, nil)
	echo := tools["shop__echo"]
	args := json.RawMessage(`{"message":"hello"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := echo.Call(ctx, args)
		if err != nil || res.IsError {
			b.Fatalf("call failed: %v %q", err, res.Content)
		}
	}
}

// BenchmarkToolsFromCache measures what a dialog start pays per MCP server
// once the pool holds the session and its tool list.
func BenchmarkToolsFromCache(b *testing.B) {
	pool := inMemoryPool(b)
	server := botconfig.MCPServer{Name: "shop", Transport: botconfig.TransportHTTP, URL: "http://unused.invalid/mcp",
		Headers: map[string]string{"Authorization": "Bearer {{secrets.t}}"}}
	vars := botconfig.Vars{"secrets.t": "tok"}
	ctx := context.Background()
	mustTools(b, pool, server, vars)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := mcptool.Tools(ctx, pool, tenant, server, vars); err != nil {
			b.Fatal(err)
		}
	}
}
