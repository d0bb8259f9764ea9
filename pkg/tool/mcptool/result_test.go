package mcptool_test

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool"
	"github.com/parleyhq/parley/pkg/tool/mcptool"
)

func TestResultsReadWellForTheModel(t *testing.T) {
	server := botconfig.MCPServer{Name: "shop", Transport: botconfig.TransportHTTP, URL: "http://unused.invalid/mcp", Timeout: 0.2}
	tools := mustTools(t, inMemoryPool(t), server, nil)
	cases := []struct {
		name     string
		tool     string
		args     string
		wantErr  bool
		want     []string
		wantNone []string
	}{
		{"text content comes back as it is", "shop__echo", `{"message":"hi"}`, false, []string{"echo: hi"}, nil},
		{"an isError result is an error with its content", "shop__fail", `{}`, true, []string{"the warehouse is closed"}, nil},
		{"an image becomes a placeholder with type and size", "shop__image", `{}`, false,
			[]string{"here it is", "[image: image/png, 8 bytes]"}, []string{"iVBOR"}},
		{"structured content appears once as compact JSON", "shop__weather", `{}`, false,
			[]string{`{"city":"Oslo","temperature":-3.5}`}, nil},
		{"resources are summarised", "shop__resources", `{}`, false,
			[]string{"[resource link: manual <file:///manual.pdf>, application/pdf: User manual]",
				"[resource <mem://note>, text/plain]\nremember the milk",
				"[resource <mem://blob>: application/octet-stream, 3 bytes]"}, nil},
		{"a call past the server timeout says so", "shop__sleep", `{"seconds":30}`, true,
			[]string{`"sleep" of server "shop" did not answer within 200ms`}, nil},
		{"arguments the server rejects are an error the model can read", "shop__add", `{"a":"two"}`, true,
			[]string{`want "number"`}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := mustCall(t, tools, tc.tool, tc.args)
			wantContent(t, res, tc.wantErr, tc.want...)
			for _, n := range tc.wantNone {
				if strings.Contains(res.Content, n) {
					t.Errorf("content %q contains %q", res.Content, n)
				}
			}
		})
	}
	t.Run("structured content is not repeated when a text block mirrors it", func(t *testing.T) {
		res := mustCall(t, tools, "shop__weather", `{}`)
		if n := strings.Count(res.Content, "Oslo"); n != 1 {
			t.Errorf("content %q mentions the structured value %d times, want 1", res.Content, n)
		}
	})
}

func TestAServersJSONRPCErrorIsAResultAndNoReconnect(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T) (*mcptool.Pool, botconfig.MCPServer)
	}{
		{"in memory", func(t *testing.T) (*mcptool.Pool, botconfig.MCPServer) {
			return inMemoryPool(t), botconfig.MCPServer{Name: "shop", Transport: botconfig.TransportHTTP, URL: "http://unused.invalid/mcp"}
		}},
		{"over streamable HTTP", func(t *testing.T) (*mcptool.Pool, botconfig.MCPServer) {
			srv := startHTTPServer(t, false)
			return newPool(t, mcptool.Options{HTTPClient: outboundClient(t, srv.URL)}),
				botconfig.MCPServer{Name: "shop", Transport: botconfig.TransportHTTP, URL: srv.URL}
		}},
		{"over SSE", func(t *testing.T) (*mcptool.Pool, botconfig.MCPServer) {
			srv := startHTTPServer(t, true)
			return newPool(t, mcptool.Options{HTTPClient: outboundClient(t, srv.URL)}),
				botconfig.MCPServer{Name: "shop", Transport: botconfig.TransportSSE, URL: srv.URL}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name+" an unknown tool is answered with the server's error", func(t *testing.T) {
			pool, server := tc.setup(t)
			tools := mustTools(t, pool, server, nil)
			// A tool the server does not know is answered with a JSON-RPC
			// error, not an isError result.
			missing := mcptool.WithRemoteName(tools["shop__echo"], "no-such-tool")
			res := mustCall(t, map[string]tool.Tool{"x": missing}, "x", `{}`)
			wantContent(t, res, true, `MCP server "shop" rejected the call to "no-such-tool"`)
			if got := pool.Stats().Connects; got != 1 {
				t.Errorf("Connects = %d, want 1: a server's error answer must not cause a reconnect", got)
			}
		})
	}
}
