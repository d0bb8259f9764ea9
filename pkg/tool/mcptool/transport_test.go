package mcptool_test

import (
	"testing"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool/mcptool"
)

func TestToolsWorkOverEveryTransport(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T) (*mcptool.Pool, botconfig.MCPServer)
	}{
		{"in-memory sessions serve the tools", func(t *testing.T) (*mcptool.Pool, botconfig.MCPServer) {
			return inMemoryPool(t), botconfig.MCPServer{Name: "shop", Transport: botconfig.TransportHTTP, URL: "http://unused.invalid/mcp"}
		}},
		{"streamable HTTP serves the tools", func(t *testing.T) (*mcptool.Pool, botconfig.MCPServer) {
			srv := startHTTPServer(t, false)
			return newPool(t, mcptool.Options{HTTPClient: outboundClient(t, srv.URL)}),
				botconfig.MCPServer{Name: "shop", Transport: botconfig.TransportHTTP, URL: srv.URL}
		}},
		{"SSE serves the tools", func(t *testing.T) (*mcptool.Pool, botconfig.MCPServer) {
			srv := startHTTPServer(t, true)
			return newPool(t, mcptool.Options{HTTPClient: outboundClient(t, srv.URL)}),
				botconfig.MCPServer{Name: "shop", Transport: botconfig.TransportSSE, URL: srv.URL}
		}},
		{"an allowed stdio command serves the tools", func(t *testing.T) (*mcptool.Pool, botconfig.MCPServer) {
			server := stdioServer("shop")
			return newPool(t, mcptool.Options{Stdio: allowing(server, []string{"/bin/false"})}), server
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pool, server := tc.setup(t)
			tools := mustTools(t, pool, server, nil)
			wantContent(t, mustCall(t, tools, "shop__echo", `{"message":"hello"}`), false, "echo: hello")
			wantContent(t, mustCall(t, tools, "shop__add", `{"a":2,"b":40}`), false, "42")
			wantContent(t, mustCall(t, tools, "shop__fail", `{}`), true, "the warehouse is closed")
			if got := pool.Stats().Connects; got != 1 {
				t.Errorf("Connects = %d after several calls, want 1 shared connection", got)
			}
		})
	}
}

// allowing is the operator policy that runs exactly server's argv, plus
// any other argv given, and lets it set the env keys it sets.
func allowing(server botconfig.MCPServer, others ...[]string) botconfig.StdioPolicy {
	p := botconfig.StdioPolicy{Allow: append([][]string{server.Argv()}, others...)}
	for k := range server.Env {
		p.EnvKeys = append(p.EnvKeys, k)
	}
	return p
}
