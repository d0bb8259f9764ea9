package mcptool

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/parleyhq/parley/pkg/tool"
)

// DialInMemory makes p reach every server through an in-memory transport to
// a fresh session of the server newServer returns, instead of the network.
func DialInMemory(p *Pool, newServer func() *mcp.Server) {
	p.dial = func(ctx context.Context, _ *target) (mcp.Transport, error) {
		client, server := mcp.NewInMemoryTransports()
		if _, err := newServer().Connect(ctx, server, nil); err != nil {
			return nil, err
		}
		return client, nil
	}
}

// CloseIdle runs the idle reaper as if the clock read now.
func CloseIdle(p *Pool, now time.Time) { p.closeIdle(now) }

// ExposedName is exposedName, for the naming tests.
var ExposedName = exposedName

// NormalizeSchema is normalizeSchema, for the schema tests.
var NormalizeSchema = normalizeSchema

// WithRemoteName returns a copy of an MCP tool that calls remote on its
// server instead, to provoke the server's unknown-tool error.
func WithRemoteName(tl tool.Tool, remote string) tool.Tool {
	c := *tl.(*Tool)
	c.remote = remote
	return &c
}

// HeaderTransport wraps base so it adds headers to requests for rawURL's
// origin, as the pool does for a remote server.
func HeaderTransport(base http.RoundTripper, headers map[string]string, rawURL string) http.RoundTripper {
	u, err := url.Parse(rawURL)
	if err != nil {
		panic(err)
	}
	return &headerTransport{base: base, headers: headers, scheme: u.Scheme, host: u.Host}
}

// Substitute fills one header or env value, as Tools does.
func Substitute(s string, vars map[string]string) (string, error) {
	return substitute(s, vars, map[string]struct{}{})
}

// DialFunc makes p open every connection with dial, which returns the
// transport to use.
func DialFunc(p *Pool, dial func(ctx context.Context) (mcp.Transport, error)) {
	p.dial = func(ctx context.Context, _ *target) (mcp.Transport, error) { return dial(ctx) }
}

// OnWait makes p call f whenever a caller starts waiting for another
// caller's connection attempt.
func OnWait(p *Pool, f func()) { p.waiting = f }
