package mcptool_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/tool"
	"github.com/parleyhq/parley/pkg/tool/mcptool"
)

const tenant = "acme"

// newPool returns a pool closed when the test ends.
func newPool(t testing.TB, opts mcptool.Options) *mcptool.Pool {
	t.Helper()
	p := mcptool.New(opts)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// inMemoryPool returns a pool whose every connection is a fresh in-process
// session of newTestServer.
func inMemoryPool(t testing.TB) *mcptool.Pool {
	p := newPool(t, mcptool.Options{HTTPClient: outboundClient(t, "http://127.0.0.1:1")})
	mcptool.DialInMemory(p, newTestServer)
	return p
}

// outboundClient is the SSRF-safe client with the exception an operator
// would configure for a server on this machine: loopback, on its port.
func outboundClient(t testing.TB, rawURL string) *http.Client {
	t.Helper()
	policy, err := outbound.ParsePolicy([]string{"127.0.0.1/32"}, []int{portOf(t, rawURL)})
	if err != nil {
		t.Fatal(err)
	}
	return outbound.NewClient(policy, outbound.Options{})
}

func portOf(t testing.TB, rawURL string) int {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// stdioServer is a config that runs this test binary as a stdio MCP server.
func stdioServer(name string) botconfig.MCPServer {
	return botconfig.MCPServer{
		Name:      name,
		Transport: botconfig.TransportStdio,
		Command:   os.Args[0],
		Args:      []string{"-test.run=^$"},
		Env:       map[string]string{stdioServerEnv: "1"},
	}
}

func mustTools(t testing.TB, p *mcptool.Pool, server botconfig.MCPServer, vars botconfig.Vars) map[string]tool.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, err := mcptool.Tools(ctx, p, tenant, server, vars)
	if err != nil {
		t.Fatalf("Tools: %v", err)
	}
	byName := map[string]tool.Tool{}
	for _, tl := range tools {
		byName[tl.Definition().Name] = tl
	}
	return byName
}

func mustCall(t testing.TB, tools map[string]tool.Tool, name, args string) tool.Result {
	t.Helper()
	tl, ok := tools[name]
	if !ok {
		t.Fatalf("no tool %q among %v", name, names(tools))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := tl.Call(ctx, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: Call returned a Go error, want a result: %v", name, err)
	}
	if res.Meta.Kind != "mcp" {
		t.Errorf("%s: Meta.Kind = %q, want mcp", name, res.Meta.Kind)
	}
	return res
}

func names(tools map[string]tool.Tool) []string {
	var out []string
	for n := range tools {
		out = append(out, n)
	}
	return out
}

func wantContent(t testing.TB, res tool.Result, wantErr bool, want ...string) {
	t.Helper()
	if res.IsError != wantErr {
		t.Errorf("IsError = %v, want %v (content %q)", res.IsError, wantErr, res.Content)
	}
	for _, w := range want {
		if !strings.Contains(res.Content, w) {
			t.Errorf("content %q does not contain %q", res.Content, w)
		}
	}
}
