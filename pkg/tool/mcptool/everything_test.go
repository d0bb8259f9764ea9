package mcptool_test

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool/mcptool"
)

// everythingEnv may name the server-everything executable; otherwise the
// tests look where .ci/install-mcp.sh puts it.
const everythingEnv = "PARLEY_TEST_MCP_EVERYTHING"

// everythingBin returns the reference MCP server's executable, or skips.
func everythingBin(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv(everythingEnv); bin != "" {
		return bin
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: skipping the @modelcontextprotocol/server-everything suites")
	}
	dir, _ := os.Getwd()
	for {
		bin := filepath.Join(dir, ".ci", "node", "node_modules", ".bin", "mcp-server-everything")
		if _, err := os.Stat(bin); err == nil {
			return bin
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	t.Skipf("@modelcontextprotocol/server-everything is not installed: run .ci/install-mcp.sh or set %s", everythingEnv)
	return ""
}

// startEverything runs server-everything with the given transport on a free
// loopback port and returns its base URL once it accepts connections, and a
// function that kills it.
func startEverything(t *testing.T, bin, transport string) (base string, kill func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	kill = runEverything(t, bin, transport, addr)
	return "http://" + addr, kill
}

// runEverything starts server-everything on addr, waits until it listens and
// returns a function that kills it (also called when the test ends).
func runEverything(t *testing.T, bin, transport, addr string) (kill func()) {
	t.Helper()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, transport)
	cmd.Env = append(os.Environ(), "PORT="+port)
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	kill = func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	t.Cleanup(kill)
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return kill
		}
		select {
		case <-exited:
			t.Fatalf("server-everything %s exited before listening:\n%s", transport, logs.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything %s did not listen on %s within 30s:\n%s", transport, addr, logs.String())
		}
	}
}

func TestServerEverythingOverEveryTransport(t *testing.T) {
	bin := everythingBin(t)
	cases := []struct {
		name  string
		setup func(t *testing.T) (*mcptool.Pool, botconfig.MCPServer)
	}{
		{"over stdio", func(t *testing.T) (*mcptool.Pool, botconfig.MCPServer) {
			server := botconfig.MCPServer{Name: "everything", Transport: botconfig.TransportStdio, Command: bin, Args: []string{"stdio"},
				Env: map[string]string{"GREETING": "{{secrets.greeting}}"}}
			return newPool(t, mcptool.Options{Stdio: allowing(server)}), server
		}},
		{"over SSE", func(t *testing.T) (*mcptool.Pool, botconfig.MCPServer) {
			base, _ := startEverything(t, bin, "sse")
			return newPool(t, mcptool.Options{HTTPClient: outboundClient(t, base)}),
				botconfig.MCPServer{Name: "everything", Transport: botconfig.TransportSSE, URL: base + "/sse"}
		}},
		{"over streamable HTTP", func(t *testing.T) (*mcptool.Pool, botconfig.MCPServer) {
			base, _ := startEverything(t, bin, "streamableHttp")
			return newPool(t, mcptool.Options{HTTPClient: outboundClient(t, base)}),
				botconfig.MCPServer{Name: "everything", Transport: botconfig.TransportHTTP, URL: base + "/mcp"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pool, server := tc.setup(t)
			tools := mustTools(t, pool, server, botconfig.Vars{"secrets.greeting": "hej"})
			t.Run("echo answers", func(t *testing.T) {
				wantContent(t, mustCall(t, tools, "everything__echo", `{"message":"hello"}`), false, "Echo: hello")
			})
			t.Run("get-sum adds", func(t *testing.T) {
				wantContent(t, mustCall(t, tools, "everything__get-sum", `{"a":2,"b":40}`), false, "is 42")
			})
			t.Run("an image becomes a placeholder", func(t *testing.T) {
				wantContent(t, mustCall(t, tools, "everything__get-tiny-image", `{}`), false, "[image: image/png, ")
			})
			t.Run("structured content is read once", func(t *testing.T) {
				res := mustCall(t, tools, "everything__get-structured-content", `{"location":"Chicago"}`)
				wantContent(t, res, false, `"temperature"`)
				if n := strings.Count(res.Content, "temperature"); n != 1 {
					t.Errorf("content %q repeats the structured value (%d times)", res.Content, n)
				}
			})
			t.Run("invalid arguments are an error result", func(t *testing.T) {
				wantContent(t, mustCall(t, tools, "everything__get-sum", `{"a":"two","b":1}`), true)
			})
			if server.Transport == botconfig.TransportStdio {
				t.Run("the process sees its config env and not Parley's", func(t *testing.T) {
					res := mustCall(t, tools, "everything__get-env", `{}`)
					wantContent(t, res, false, `"GREETING": "[redacted]"`)
					if strings.Contains(res.Content, stdioServerEnv) || strings.Contains(res.Content, "GOPATH") {
						t.Errorf("the server inherited the test process's environment: %s", res.Content)
					}
				})
			}
		})
	}
}

func TestServerEverythingRestartIsInvisibleToTheDialog(t *testing.T) {
	bin := everythingBin(t)
	for _, tc := range []struct{ transport, mode, path string }{
		{botconfig.TransportHTTP, "streamableHttp", "/mcp"},
		{botconfig.TransportSSE, "sse", "/sse"},
	} {
		t.Run("over "+tc.mode+" a call after the restart reconnects and succeeds", func(t *testing.T) {
			base, kill := startEverything(t, bin, tc.mode)
			addr := strings.TrimPrefix(base, "http://")
			pool := newPool(t, mcptool.Options{HTTPClient: outboundClient(t, base)})
			tools := mustTools(t, pool, botconfig.MCPServer{Name: "everything", Transport: tc.transport, URL: base + tc.path}, nil)
			wantContent(t, mustCall(t, tools, "everything__echo", `{"message":"one"}`), false, "Echo: one")

			kill()
			runEverything(t, bin, tc.mode, addr)

			wantContent(t, mustCall(t, tools, "everything__echo", `{"message":"two"}`), false, "Echo: two")
			if got := pool.Stats().Connects; got != 2 {
				t.Errorf("Connects = %d, want 2 (the first and one reconnect)", got)
			}
		})
	}
}
