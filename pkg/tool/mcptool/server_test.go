package mcptool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/parleyhq/parley/pkg/redact/redacttest"
)

// tinyPNG is the payload of the image tool: 8 bytes, reported by size only.
var tinyPNG = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}

type echoIn struct {
	Message string `json:"message" jsonschema:"the text to echo"`
}

type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type weather struct {
	City        string  `json:"city"`
	Temperature float64 `json:"temperature"`
}

type sleepIn struct {
	Seconds float64 `json:"seconds"`
}

// newTestServer is the in-process MCP server every fast test talks to: a
// few tools covering each kind of result the package maps.
func newTestServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "parley-test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes the message"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Message}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds a and b"},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(in.A + in.B)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("the warehouse is closed")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "image", Description: "Returns a picture"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "here it is"},
				&mcp.ImageContent{MIMEType: "image/png", Data: tinyPNG},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "weather", Description: "Structured weather"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, weather, error) {
			return nil, weather{City: "Oslo", Temperature: -3.5}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "resources", Description: "Links and embeds resources"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.ResourceLink{URI: "file:///manual.pdf", Name: "manual", MIMEType: "application/pdf", Description: "User manual"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://note", MIMEType: "text/plain", Text: "remember the milk"}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://blob", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3}}},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sleep", Description: "Sleeps, or until cancelled"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in sleepIn) (*mcp.CallToolResult, any, error) {
			select {
			case <-time.After(time.Duration(in.Seconds * float64(time.Second))):
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "awake"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Echoes the request's Authorization header; encoded: its bearer token in every encoding a server might use"},
		func(_ context.Context, req *mcp.CallToolRequest, in struct {
			Encoded bool `json:"encoded,omitempty"`
		}) (*mcp.CallToolResult, any, error) {
			auth := ""
			if req.Extra != nil && req.Extra.Header != nil {
				auth = req.Extra.Header.Get("Authorization")
			}
			text := "auth=" + auth
			if in.Encoded {
				text = ""
				for _, sp := range redacttest.Spellings(strings.TrimPrefix(auth, "Bearer ")) {
					text += sp.Name + ": " + sp.Text + "\n"
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	return s
}

// httpServer serves the test server over streamable HTTP or SSE on
// loopback. Restart swaps in a new handler, so every session the old one
// knew is gone, as after a real server restart.
type httpServer struct {
	*httptest.Server
	sessions atomic.Int64 // initialize requests: the SDK's server answers discover with an error, so each connect sends one
	mu       sync.Mutex
	handler  http.Handler
	headers  []http.Header
	sse      bool
}

func startHTTPServer(t testing.TB, sse bool) *httpServer {
	t.Helper()
	h := &httpServer{sse: sse}
	h.Restart()
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		handler := h.handler
		h.headers = append(h.headers, r.Header.Clone())
		h.mu.Unlock()
		if isHandshake(r) {
			h.sessions.Add(1)
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(h.Close)
	return h
}

// Restart replaces the handler, forgetting every session.
func (h *httpServer) Restart() {
	// One server for the handler's lifetime: the stateless protocol asks for
	// a server per request, and a restart is a new handler.
	server := newTestServer()
	newServer := func(*http.Request) *mcp.Server { return server }
	var handler http.Handler
	if h.sse {
		handler = mcp.NewSSEHandler(newServer, nil)
	} else {
		handler = mcp.NewStreamableHTTPHandler(newServer, nil)
	}
	h.mu.Lock()
	h.handler = handler
	h.mu.Unlock()
}

// Headers returns the headers of every request received so far.
func (h *httpServer) Headers() []http.Header {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]http.Header(nil), h.headers...)
}

// isHandshake reports whether r opens an MCP session with initialize.
func isHandshake(r *http.Request) bool {
	if r.Method != http.MethodPost || r.Body == nil {
		return false
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return false
	}
	var msg struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &msg)
	return msg.Method == "initialize"
}

// Vanish makes the server disappear mid-session: new connections are
// refused and open ones cut. (httptest's Close would wait for the client's
// open event stream.)
func (h *httpServer) Vanish() {
	h.Listener.Close()
	h.CloseClientConnections()
}
