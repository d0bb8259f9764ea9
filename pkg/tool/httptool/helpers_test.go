package httptool

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/tool"
)

// received is what the test server saw of one request.
type received struct {
	Method     string
	RequestURI string
	Query      url.Values
	Header     http.Header
	Body       string
}

// apiServer is a real HTTP server on 127.0.0.1 that records requests and
// answers with handle (or 200 "ok").
type apiServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []received
	conns    atomic.Int64
	handle   http.HandlerFunc
}

func newAPIServer(t testing.TB, handle http.HandlerFunc) *apiServer {
	t.Helper()
	s := &apiServer{handle: handle}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body)) // handlers may read it again
		s.mu.Lock()
		s.requests = append(s.requests, received{r.Method, r.RequestURI, r.URL.Query(), r.Header.Clone(), string(body)})
		s.mu.Unlock()
		if s.handle != nil {
			s.handle(w, r)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	s.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *apiServer) port() int { return s.Listener.Addr().(*net.TCPAddr).Port }

func (s *apiServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// last returns the last request, failing the test when there was none.
func (s *apiServer) last(t *testing.T) received {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		t.Fatal("the server received no request")
	}
	return s.requests[len(s.requests)-1]
}

// clientFor returns an outbound client that may reach the given servers
// (they listen on 127.0.0.1, which the default policy refuses).
func clientFor(t testing.TB, servers ...*apiServer) *http.Client {
	t.Helper()
	var ports []int
	for _, s := range servers {
		ports = append(ports, s.port())
	}
	policy, err := outbound.ParsePolicy([]string{"127.0.0.1"}, ports)
	if err != nil {
		t.Fatal(err)
	}
	return outbound.NewClient(policy, outbound.Options{})
}

// compileTool compiles a config holding one tool (toolJSON) and the given
// context variables, returning its spec. {base} in toolJSON is replaced by
// base.
func compileTool(t testing.TB, base, toolJSON, contextVars string) botconfig.ToolSpec {
	t.Helper()
	if contextVars == "" {
		contextVars = "[]"
	}
	cfgJSON := `{"basic_settings": {"name": "Test"}, "tools": [` + strings.ReplaceAll(toolJSON, "{base}", base) +
		`], "context_variables": ` + contextVars + `}`
	cfg, err := botconfig.Load([]byte(cfgJSON))
	if err != nil {
		t.Fatalf("loading config: %v\n%s", err, cfgJSON)
	}
	bot, err := botconfig.Compile(cfg)
	if err != nil {
		t.Fatalf("compiling config: %v\n%s", err, cfgJSON)
	}
	if len(bot.Tools) != 1 {
		t.Fatalf("compiled %d tools, want 1", len(bot.Tools))
	}
	return bot.Tools[0]
}

// newTool compiles toolJSON against srv and builds the tool.
func newTool(t *testing.T, srv *apiServer, toolJSON, contextVars string, vars botconfig.Vars, opts Options) tool.Tool {
	t.Helper()
	spec := compileTool(t, srv.URL, toolJSON, contextVars)
	tl, err := New(spec, clientFor(t, srv), vars, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// call runs the tool and fails on a Go error, which only the caller's own
// cancellation may produce.
func call(t *testing.T, tl tool.Tool, args string) tool.Result {
	t.Helper()
	res, err := tl.Call(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("Call returned a Go error: %v", err)
	}
	if res.Meta.Kind != "http" {
		t.Errorf("Meta.Kind = %q, want http", res.Meta.Kind)
	}
	return res
}

// jsonEqual compares two JSON texts structurally.
func jsonEqual(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got invalid JSON %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want invalid JSON %q: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("JSON = %s, want %s", gb, wb)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
