package mcptool_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/tool/mcptool"
)

func TestAServerRestartIsInvisibleToTheDialog(t *testing.T) {
	for _, sse := range []bool{false, true} {
		transport := botconfig.TransportHTTP
		if sse {
			transport = botconfig.TransportSSE
		}
		t.Run("over "+transport+" the next call reconnects and succeeds", func(t *testing.T) {
			srv := startHTTPServer(t, sse)
			pool := newPool(t, mcptool.Options{HTTPClient: outboundClient(t, srv.URL)})
			tools := mustTools(t, pool, botconfig.MCPServer{Name: "shop", Transport: transport, URL: srv.URL}, nil)
			wantContent(t, mustCall(t, tools, "shop__echo", `{"message":"before"}`), false, "echo: before")

			srv.Restart()

			wantContent(t, mustCall(t, tools, "shop__echo", `{"message":"after"}`), false, "echo: after")
			if got := pool.Stats().Connects; got != 2 {
				t.Errorf("Connects = %d, want 2 (the first and one reconnect)", got)
			}
		})
	}
}

func TestAClosedSessionIsReopenedOnTheNextCall(t *testing.T) {
	server := stdioServer("shop")
	pool := newPool(t, mcptool.Options{Stdio: allowing(server)})
	tools := mustTools(t, pool, server, nil)
	wantContent(t, mustCall(t, tools, "shop__echo", `{"message":"one"}`), false, "echo: one")

	// Idle-closing stops the process; the tools the dialog holds still work.
	mcptool.CloseIdle(pool, time.Now().Add(mcptool.DefaultIdleTimeout))
	if open := pool.Stats().Open; open != 0 {
		t.Fatalf("Open = %d after idle close, want 0", open)
	}
	wantContent(t, mustCall(t, tools, "shop__echo", `{"message":"two"}`), false, "echo: two")
	if got := pool.Stats(); got.Connects != 2 || got.Open != 1 {
		t.Errorf("Stats = %+v, want 2 connects and 1 open", got)
	}
}

func TestConcurrentFirstUsesShareOneConnection(t *testing.T) {
	srv := startHTTPServer(t, false)
	pool := newPool(t, mcptool.Options{HTTPClient: outboundClient(t, srv.URL)})
	server := botconfig.MCPServer{Name: "shop", Transport: botconfig.TransportHTTP, URL: srv.URL}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			tools, err := mcptool.Tools(context.Background(), pool, tenant, server, nil)
			if err == nil && len(tools) == 0 {
				err = errors.New("no tools")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.sessions.Load(); n != 1 {
		t.Errorf("server saw %d sessions, want 1", n)
	}
}

func TestConnectionsAreKeyedByTenantAndConfig(t *testing.T) {
	srv := startHTTPServer(t, false)
	pool := newPool(t, mcptool.Options{HTTPClient: outboundClient(t, srv.URL)})
	base := botconfig.MCPServer{Name: "shop", Transport: botconfig.TransportHTTP, URL: srv.URL}
	filtered := base
	filtered.Timeout = 5
	filtered.Tools.Deny = []string{"sleep"}
	moved := base
	moved.URL = srv.URL + "/v2"
	withHeader := base
	withHeader.Headers = map[string]string{"Authorization": "Bearer {{secrets.t}}"}
	ctx := context.Background()
	steps := []struct {
		name     string
		tenant   string
		server   botconfig.MCPServer
		vars     botconfig.Vars
		sessions int64
	}{
		{"the first use connects", "acme", base, nil, 1},
		{"the same tenant and config reuse it", "acme", base, nil, 1},
		{"another tenant with the same config gets its own", "globex", base, nil, 2},
		{"a changed timeout or allow list reuses it", "acme", filtered, nil, 2},
		{"a changed URL gets its own", "acme", moved, nil, 3},
		{"a header gets its own", "acme", withHeader, botconfig.Vars{"secrets.t": "one"}, 4},
		{"the same header value reuses that", "acme", withHeader, botconfig.Vars{"secrets.t": "one"}, 4},
		{"a rotated secret gets its own", "acme", withHeader, botconfig.Vars{"secrets.t": "two"}, 5},
	}
	for _, s := range steps {
		if _, err := mcptool.Tools(ctx, pool, s.tenant, s.server, s.vars); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := srv.sessions.Load(); got != s.sessions {
			t.Errorf("%s: server saw %d sessions, want %d", s.name, got, s.sessions)
		}
	}
}

func TestStdioRunsOnlyAllowlistedArgv(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "spawned")
	touch := "touch " + marker
	allowed := []string{"sh", "-c", touch}
	cases := []struct {
		name  string
		allow [][]string
		argv  []string
	}{
		{"an empty allowlist refuses every command", nil, allowed},
		{"a command allowed with other arguments is refused", [][]string{{"sh", "-c", "true"}}, allowed},
		{"the bare command is not its argv", [][]string{{"sh"}}, allowed},
		{"an extra argument is refused", [][]string{allowed}, append(slices.Clone(allowed), "extra")},
		{"a missing argument is refused", [][]string{allowed}, allowed[:2]},
		{"reordered arguments are refused", [][]string{allowed}, []string{"sh", touch, "-c"}},
		{"arguments joined into one are refused", [][]string{{"sh", "-c", "touch", marker}}, allowed},
		{"one argument split in two is refused", [][]string{allowed}, []string{"sh", "-c", "touch", marker}},
		{"the command and an argument run together are refused", [][]string{allowed}, []string{"sh -c", touch}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			server := botconfig.MCPServer{Name: "evil", Transport: botconfig.TransportStdio, Command: tc.argv[0], Args: tc.argv[1:]}
			pool := newPool(t, mcptool.Options{Stdio: botconfig.StdioPolicy{Allow: tc.allow}})
			_, err := mcptool.Tools(context.Background(), pool, tenant, server, nil)
			if err == nil || !strings.Contains(err.Error(), "not on the operator's allowlist") {
				t.Fatalf("err = %v, want an allowlist refusal", err)
			}
			if _, statErr := os.Stat(marker); statErr == nil {
				t.Fatal("the command ran")
			}
			if got := pool.Stats().Connects; got != 0 {
				t.Errorf("Connects = %d, want 0", got)
			}
		})
	}
}

func TestStdioServersSeeOnlyTheirOwnEnvironment(t *testing.T) {
	t.Setenv("PARLEY_SECRET_KEY", "must-not-leak")
	dir := t.TempDir()
	out := filepath.Join(dir, "env")
	server := botconfig.MCPServer{Name: "env", Transport: botconfig.TransportStdio, Command: "sh",
		Args: []string{"-c", "env > " + out}, Env: map[string]string{"API_KEY": "{{secrets.k}}"}}
	pool := newPool(t, mcptool.Options{Stdio: botconfig.StdioPolicy{AllowAll: true}, StdioEnv: []string{"PATH=/usr/bin:/bin", "HOME=" + dir}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The script is no MCP server, so connecting fails; it has run by then.
	if _, err := mcptool.Tools(ctx, pool, tenant, server, botconfig.Vars{"secrets.k": "k-123"}); err == nil {
		t.Fatal("Tools succeeded against a process that speaks no MCP")
	}
	env, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"API_KEY=k-123", "PATH=/usr/bin:/bin", "HOME=" + dir} {
		if !strings.Contains(string(env), want) {
			t.Errorf("environment lacks %q:\n%s", want, env)
		}
	}
	if strings.Contains(string(env), "must-not-leak") {
		t.Errorf("the server inherited Parley's environment:\n%s", env)
	}
}

func TestRemoteServersNeedTheOutboundClient(t *testing.T) {
	pool := newPool(t, mcptool.Options{})
	for _, transport := range []string{botconfig.TransportHTTP, botconfig.TransportSSE} {
		server := botconfig.MCPServer{Name: "docs", Transport: transport, URL: "https://mcp.example.com/mcp"}
		_, err := mcptool.Tools(context.Background(), pool, tenant, server, nil)
		if err == nil || !strings.Contains(err.Error(), "no outbound HTTP client") {
			t.Errorf("%s: err = %v, want a refusal naming the missing client", transport, err)
		}
	}
}

func TestInvalidServerConfigsAreRefused(t *testing.T) {
	pool := newPool(t, mcptool.Options{HTTPClient: outboundClient(t, "http://127.0.0.1:1")})
	cases := []struct {
		name    string
		server  botconfig.MCPServer
		wantErr string
	}{
		{"an unknown transport", botconfig.MCPServer{Name: "x", Transport: "websocket"}, "unknown transport"},
		{"a relative URL", botconfig.MCPServer{Name: "x", Transport: "http", URL: "/mcp"}, "absolute http or https URL"},
		{"a file URL", botconfig.MCPServer{Name: "x", Transport: "sse", URL: "file:///etc/passwd"}, "absolute http or https URL"},
		{"stdio without a command", botconfig.MCPServer{Name: "x", Transport: "stdio"}, "needs a command"},
		{"a server without a name", botconfig.MCPServer{Transport: "http", URL: "https://a.example/mcp"}, "name is empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name+" is refused", func(t *testing.T) {
			_, err := mcptool.Tools(context.Background(), pool, tenant, tc.server, nil)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestAnUnreachableServerIsAnErrorNamingIt(t *testing.T) {
	srv := startHTTPServer(t, false)
	url := srv.URL
	srv.Close()
	pool := newPool(t, mcptool.Options{HTTPClient: outboundClient(t, srv.URL)})
	_, err := mcptool.Tools(context.Background(), pool, tenant, botconfig.MCPServer{Name: "gone", Transport: "http", URL: url}, nil)
	if err == nil || !strings.Contains(err.Error(), `mcp server "gone"`) {
		t.Errorf("err = %v, want one naming the server", err)
	}
}

func TestClosedPoolRefusesWorkAndStopsItsServers(t *testing.T) {
	server := stdioServer("shop")
	pidFile := filepath.Join(t.TempDir(), "pid")
	server.Env[pidFileEnv] = pidFile
	pool := mcptool.New(mcptool.Options{Stdio: allowing(server)})
	tools := mustTools(t, pool, server, nil)
	pidText, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(pidText))

	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	// Close waits for the process to exit and reaps it, so it is gone now.
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("stdio server %d still exists after Close (kill -0: %v)", pid, err)
	}
	if _, err := mcptool.Tools(context.Background(), pool, tenant, server, nil); !errors.Is(err, mcptool.ErrClosed) {
		t.Errorf("Tools after Close: err = %v, want ErrClosed", err)
	}
	res := mustCall(t, tools, "shop__echo", `{"message":"late"}`)
	wantContent(t, res, true, "closed")
	if open := pool.Stats().Open; open != 0 {
		t.Errorf("Open = %d after Close, want 0", open)
	}
}

func TestTheOutboundPolicyGuardsRemoteServers(t *testing.T) {
	for _, transport := range []string{botconfig.TransportHTTP, botconfig.TransportSSE} {
		t.Run("a loopback "+transport+" server is unreachable without an operator exception", func(t *testing.T) {
			srv := startHTTPServer(t, transport == botconfig.TransportSSE)
			// The port is allowed, so only the address check can refuse.
			policy := outbound.Policy{ExtraPorts: []int{portOf(t, srv.URL)}}
			pool := newPool(t, mcptool.Options{HTTPClient: outbound.NewClient(policy, outbound.Options{})})
			_, err := mcptool.Tools(context.Background(), pool, tenant, botconfig.MCPServer{Name: "internal", Transport: transport, URL: srv.URL}, nil)
			if err == nil {
				t.Fatal("Tools reached a loopback server through the outbound client")
			}
			if !strings.Contains(err.Error(), "loopback") {
				t.Errorf("err = %v, want the outbound policy's loopback refusal", err)
			}
			if n := len(srv.Headers()); n != 0 {
				t.Errorf("server received %d requests, want none", n)
			}
		})
	}
	t.Run("a client without the outbound transport is refused", func(t *testing.T) {
		pool := newPool(t, mcptool.Options{HTTPClient: &http.Client{}})
		_, err := mcptool.Tools(context.Background(), pool, tenant, botconfig.MCPServer{Name: "docs", Transport: "http", URL: "https://mcp.example.com/mcp"}, nil)
		if err == nil || !strings.Contains(err.Error(), "no outbound HTTP client") {
			t.Errorf("err = %v, want a refusal", err)
		}
	})
}

func TestCallersWaitingForAFailedAttemptShareItsError(t *testing.T) {
	const callers = 8
	pool := newPool(t, mcptool.Options{HTTPClient: outboundClient(t, "http://127.0.0.1:1")})
	var dials atomic.Int64
	release := make(chan struct{})
	waiting := make(chan struct{}, callers)
	mcptool.OnWait(pool, func() { waiting <- struct{}{} })
	mcptool.DialFunc(pool, func(ctx context.Context) (mcp.Transport, error) {
		dials.Add(1)
		<-release
		return nil, errors.New("handshake refused")
	})
	server := botconfig.MCPServer{Name: "flaky", Transport: botconfig.TransportHTTP, URL: "http://unused.invalid/mcp"}

	errs := make(chan error, callers)
	for range callers {
		go func() {
			_, err := mcptool.Tools(context.Background(), pool, tenant, server, nil)
			errs <- err
		}()
	}
	// One caller dials; release it only when all the others wait for it.
	for range callers - 1 {
		<-waiting
	}
	close(release)
	for range callers {
		if err := <-errs; err == nil || !strings.Contains(err.Error(), "handshake refused") {
			t.Errorf("err = %v, want the shared handshake failure", err)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("dialled %d times, want 1: waiters must share the failed attempt", n)
	}
	// A later caller tries again.
	if _, err := mcptool.Tools(context.Background(), pool, tenant, server, nil); err == nil {
		t.Fatal("Tools succeeded against a server that refuses")
	}
	if n := dials.Load(); n != 2 {
		t.Errorf("dialled %d times after a new call, want 2", n)
	}
}

func TestACallToAVanishedServerSaysSoWithoutTransportDetails(t *testing.T) {
	srv := startHTTPServer(t, false)
	pool := newPool(t, mcptool.Options{HTTPClient: outboundClient(t, srv.URL)})
	tools := mustTools(t, pool, botconfig.MCPServer{Name: "shop", Transport: botconfig.TransportHTTP, URL: srv.URL}, nil)
	srv.Vanish()

	res := mustCall(t, tools, "shop__echo", `{"message":"anyone?"}`)
	wantContent(t, res, true, `MCP server "shop" is unavailable right now`)
	if strings.Contains(res.Content, "127.0.0.1") {
		t.Errorf("the model sees a transport detail: %q", res.Content)
	}
}
