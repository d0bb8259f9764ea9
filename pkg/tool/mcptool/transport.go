package mcptool

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/parleyhq/parley/pkg/botconfig"
)

// transport builds the SDK transport for t. Remote transports use the pool's
// outbound client, so every request, including the SSE message endpoint a
// server announces, passes the SSRF policy at dial time.
func (p *Pool) transport(_ context.Context, t *target) (mcp.Transport, error) {
	switch t.server.Transport {
	case botconfig.TransportHTTP:
		return &mcp.StreamableClientTransport{Endpoint: t.url.String(), HTTPClient: p.httpClient(t)}, nil
	case botconfig.TransportSSE:
		return &mcp.SSEClientTransport{Endpoint: t.url.String(), HTTPClient: p.httpClient(t)}, nil
	case botconfig.TransportStdio:
		// Not CommandContext: the process outlives the call that started it and
		// is stopped by the pool (idle close, Close).
		cmd := exec.Command(t.server.Command, t.server.Args...)
		cmd.Env = p.stdioEnv(t.env)
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: p.opts.StdioTerminateTimeout}, nil
	}
	return nil, fmt.Errorf("mcp server %q: unknown transport %q", t.server.Name, t.server.Transport)
}

// httpClient returns the outbound client with t's headers added. It is a
// copy that keeps the outbound transport and redirect policy; only the
// overall Timeout is dropped, because the SSE transports hold a response
// stream open for the whole session: calls are bounded by their contexts.
func (p *Pool) httpClient(t *target) *http.Client {
	c := *p.opts.HTTPClient
	c.Timeout = 0
	if len(t.headers) > 0 {
		c.Transport = &headerTransport{base: c.Transport, headers: t.headers, scheme: t.url.Scheme, host: t.url.Host}
	}
	return &c
}

// stdioEnv is what a stdio server sees: the operator's base (PATH and HOME
// by default) and the config's own variables, nothing else of the process's
// environment, which holds Parley's own secrets.
func (p *Pool) stdioEnv(env map[string]string) []string {
	out := append([]string(nil), p.opts.StdioEnv...)
	for _, k := range sortedKeys(env) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// headerTransport adds the configured headers to requests for the server's
// own origin only: an SSE server may announce a message endpoint elsewhere,
// and the tenant's credentials must not follow it there.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	scheme  string
	host    string
}

func (h *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != h.scheme || req.URL.Host != h.host {
		return h.base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	return h.base.RoundTrip(req)
}
