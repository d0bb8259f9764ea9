package mcptool

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/parleyhq/parley/pkg/botconfig"
)

// Defaults for Options fields left zero.
const (
	DefaultIdleTimeout           = 10 * time.Minute
	DefaultConnectTimeout        = 20 * time.Second
	DefaultStdioTerminateTimeout = 2 * time.Second
	DefaultMaxResultBytes        = 64 << 10
)

// ErrClosed is returned by a Pool after Close.
var ErrClosed = errors.New("mcptool: pool is closed")

// Options configures a Pool. Only HTTPClient is needed for remote servers;
// everything else has a default.
type Options struct {
	// HTTPClient is the SSRF-safe client from pkg/outbound. Every http and sse
	// server is reached through it; without it those transports are refused.
	HTTPClient *http.Client
	// Stdio is the operator's policy: the exact argv that may run as stdio
	// servers (PARLEY_MCP_STDIO_ALLOW) and the env keys a config may set on
	// them (PARLEY_MCP_STDIO_ENV). The zero value runs nothing.
	Stdio botconfig.StdioPolicy
	// StdioEnv is the base environment of every stdio server, as KEY=VALUE,
	// before the config's own env; cmd/parley passes PATH and HOME. Nil
	// gives the server nothing else: never Parley's own environment, which
	// holds its secrets.
	StdioEnv []string
	// StdioTerminateTimeout is how long a stdio server may take to exit after
	// its stdin is closed before it is signalled.
	StdioTerminateTimeout time.Duration
	// IdleTimeout closes connections unused for that long.
	IdleTimeout time.Duration
	// ConnectTimeout bounds connecting and the MCP handshake.
	ConnectTimeout time.Duration
	// MaxResultBytes caps the text of one tool result; the cut is marked.
	MaxResultBytes int
	// Logger receives connection events; nil discards them.
	Logger *slog.Logger
	// Version is reported to servers as the client version.
	Version string
}

// Stats counts a pool's connections, for metrics and tests.
type Stats struct {
	Open     int   // connections held now
	Connects int64 // successful connects since New, reconnects included
}

// Pool holds the MCP connections of one process, keyed by tenant and server
// config. Connections open on first use, are shared by every dialog that
// uses the same config, reconnect after failures and close when idle. It is
// safe for concurrent use.
type Pool struct {
	opts Options
	impl *mcp.Implementation
	// dial builds the transport of a target; tests replace it with in-memory
	// transports.
	dial func(context.Context, *target) (mcp.Transport, error)
	// waiting, when set, is called by a caller about to wait for another's
	// connection attempt; tests use it to line callers up.
	waiting func()

	mu       sync.Mutex
	conns    map[string]*conn
	closed   bool
	connects int64

	stop chan struct{}
	done chan struct{}
}

// New returns a pool and starts its idle reaper. Call Close on shutdown.
func New(opts Options) *Pool {
	if opts.StdioTerminateTimeout <= 0 {
		opts.StdioTerminateTimeout = DefaultStdioTerminateTimeout
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	p := &Pool{
		opts:  opts,
		impl:  &mcp.Implementation{Name: "parley", Version: opts.Version},
		conns: map[string]*conn{},
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	p.dial = p.transport
	go p.reap()
	return p
}

// Close closes every connection (stdio servers get StdioTerminateTimeout to
// exit) and makes further use fail with ErrClosed.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	conns := p.conns
	p.conns = map[string]*conn{}
	p.mu.Unlock()

	close(p.stop)
	<-p.done
	closeAll(slices.Collect(maps.Values(conns)))
	return nil
}

// closeAll closes conns in parallel: each stdio server may take
// StdioTerminateTimeout to exit, and shutdown should not add them up.
func closeAll(conns []*conn) {
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(c.close)
	}
	wg.Wait()
}

// Stats reports the pool's connection counts.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	open := 0
	for _, c := range p.conns {
		if c.connected() {
			open++
		}
	}
	return Stats{Open: open, Connects: p.connects}
}

// acquire returns the connection for t, creating its entry if needed, and
// marks it in use so the reaper leaves it alone until release.
func (p *Pool) acquire(t *target) (*conn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	c, ok := p.conns[t.key]
	if !ok {
		c = newConn(p, t)
		p.conns[t.key] = c
	}
	c.active++
	return c, nil
}

func (p *Pool) release(c *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c.active--
	c.lastUsed = time.Now()
}

func (p *Pool) countConnect() {
	p.mu.Lock()
	p.connects++
	p.mu.Unlock()
}

func (p *Pool) reap() {
	defer close(p.done)
	tick := time.NewTicker(p.opts.IdleTimeout / 4)
	defer tick.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-tick.C:
			p.closeIdle(now)
		}
	}
}

// closeIdle closes the connections not used since now-IdleTimeout. Taking
// them out of the map under the same lock acquire uses means a closed
// connection is never handed out again.
func (p *Pool) closeIdle(now time.Time) {
	var idle []*conn
	p.mu.Lock()
	for key, c := range p.conns {
		if c.active == 0 && now.Sub(c.lastUsed) >= p.opts.IdleTimeout {
			idle = append(idle, c)
			delete(p.conns, key)
		}
	}
	p.mu.Unlock()
	for _, c := range idle {
		p.opts.Logger.Debug("mcp connection idle, closing", "tenant", c.target.tenantID, "server", c.target.server.Name)
	}
	closeAll(idle)
}
