package mcptool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// conn is the pooled connection to one target. The session is opened lazily
// and replaced when it fails; active and lastUsed belong to the pool's lock.
type conn struct {
	pool   *Pool
	target *target

	// connecting is held by the one goroutine that opens the session, so
	// concurrent first calls share a single connection attempt.
	connecting chan struct{}

	active   int
	lastUsed time.Time

	mu      sync.Mutex // guards the fields below
	session *mcp.ClientSession
	tools   []remoteTool // nil until listed on the current session
	catalog []catalog    // the resources and prompts (one), nil until listed on the current session
	closed  bool
	// attempts counts finished connection attempts and lastErr holds the
	// last one's error, so callers that waited for an attempt share its
	// failure instead of each trying again in turn (N callers x timeout).
	attempts int
	lastErr  error
}

func newConn(p *Pool, t *target) *conn {
	return &conn{
		pool:       p,
		target:     t,
		connecting: make(chan struct{}, 1),
		lastUsed:   time.Now(),
	}
}

func (c *conn) connected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session != nil
}

// get returns the open session, connecting when there is none. Callers
// that arrive while an attempt is under way wait for it and share its
// outcome.
func (c *conn) get(ctx context.Context) (*mcp.ClientSession, error) {
	c.mu.Lock()
	s, seen := c.session, c.attempts
	c.mu.Unlock()
	if s != nil {
		return s, nil
	}
	select {
	case c.connecting <- struct{}{}:
	default:
		if c.pool.waiting != nil {
			c.pool.waiting()
		}
		select {
		case c.connecting <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	defer func() { <-c.connecting }()
	c.mu.Lock()
	s, attempts, lastErr := c.session, c.attempts, c.lastErr
	c.mu.Unlock()
	switch {
	case s != nil:
		return s, nil
	case attempts != seen && lastErr != nil:
		return nil, lastErr
	}
	s, err := c.connect(ctx)
	// An attempt this caller gave up on says nothing about the server:
	// waiters try for themselves.
	if ctx.Err() == nil {
		c.mu.Lock()
		c.attempts++
		c.lastErr = err
		c.mu.Unlock()
	}
	return s, err
}

func (c *conn) connect(ctx context.Context) (*mcp.ClientSession, error) {
	t := c.target
	// The SSE transport ties its event stream to the context given to
	// Connect, so the session gets a context of its own, detached from the
	// caller's; the caller's cancellation and the connect timeout still abort
	// the attempt itself.
	sessionCtx, endSession := context.WithCancel(context.WithoutCancel(ctx))
	timer := time.AfterFunc(c.pool.opts.ConnectTimeout, endSession)
	stopFollowing := context.AfterFunc(ctx, endSession)
	s, err := c.open(sessionCtx)
	if !timer.Stop() || !stopFollowing() {
		err = errors.Join(err, fmt.Errorf("mcp server %q: connect: %w", t.server.Name, context.DeadlineExceeded))
		if ctx.Err() != nil {
			err = ctx.Err()
		}
	}
	if err != nil {
		endSession()
		if s != nil {
			_ = s.Close()
		}
		return nil, err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		_ = s.Close()
		endSession()
		return nil, ErrClosed
	}
	c.session, c.tools, c.catalog = s, nil, nil
	c.mu.Unlock()
	c.pool.countConnect()
	c.pool.opts.Logger.Info("mcp connected", "tenant", t.tenantID, "server", t.server.Name, "transport", t.server.Transport)
	// A session the server ends is forgotten at once, so the next call
	// reconnects instead of failing first.
	go func() {
		_ = s.Wait()
		endSession()
		c.drop(s)
	}()
	return s, nil
}

// open dials the target and performs the MCP handshake.
func (c *conn) open(ctx context.Context) (*mcp.ClientSession, error) {
	tr, err := c.pool.dial(ctx, c.target)
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(c.pool.impl, &mcp.ClientOptions{
		// Parley offers servers nothing back: no roots (a tenant's server has
		// no business with the platform's files), no sampling, no elicitation.
		Capabilities:               &mcp.ClientCapabilities{},
		Logger:                     c.pool.opts.Logger,
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { c.forgetTools() },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { c.forgetCatalog() },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { c.forgetCatalog() },
	})
	s, err := client.Connect(ctx, tr, nil)
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: connect: %s", c.target.server.Name, c.target.redact.redact(err.Error()))
	}
	return s, nil
}

// drop forgets s if it is still the current session and closes it.
func (c *conn) drop(s *mcp.ClientSession) {
	c.mu.Lock()
	if c.session == s {
		c.session, c.tools, c.catalog = nil, nil, nil
	}
	c.mu.Unlock()
	_ = s.Close()
}

func (c *conn) forgetTools() {
	c.mu.Lock()
	c.tools = nil
	c.mu.Unlock()
}

func (c *conn) forgetCatalog() {
	c.mu.Lock()
	c.catalog = nil
	c.mu.Unlock()
}

func (c *conn) close() {
	c.mu.Lock()
	s := c.session
	c.session, c.tools, c.catalog, c.closed = nil, nil, nil, true
	c.mu.Unlock()
	if s != nil {
		_ = s.Close()
	}
}

// listTools returns the server's tools, from the cache when the session that
// listed them is still open and the server has not announced a change.
func (c *conn) listTools(ctx context.Context) ([]remoteTool, error) {
	return listCached(ctx, c, "list tools", &c.tools, func(s *mcp.ClientSession) ([]remoteTool, error) {
		listed, err := listAll(ctx, s)
		if err != nil {
			return nil, err
		}
		return c.prepare(listed), nil
	})
}

// listCached returns *field, a listing the current session made, or lists
// it anew with list and keeps it for the session. A listing that failed on
// the connection is tried once more on a new one. A nil *field means not
// listed; list never returns nil without an error.
func listCached[T any](ctx context.Context, c *conn, what string, field *[]T, list func(*mcp.ClientSession) ([]T, error)) ([]T, error) {
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ {
		s, err := c.get(ctx)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		cached := *field
		if c.session != s {
			cached = nil
		}
		c.mu.Unlock()
		if cached != nil {
			return cached, nil
		}
		listed, err := list(s)
		if err == nil {
			c.mu.Lock()
			if c.session == s {
				*field = listed
			}
			c.mu.Unlock()
			return listed, nil
		}
		lastErr = err
		if !reconnectable(ctx, err) {
			break
		}
		c.drop(s)
	}
	return nil, fmt.Errorf("mcp server %q: %s: %s", c.target.server.Name, what, c.target.redact.redact(lastErr.Error()))
}

// maxListedTools bounds a server's tool list: a server that pages forever
// must not hold a dialog's start hostage, and no model takes more tools.
const maxListedTools = 1000

func listAll(ctx context.Context, s *mcp.ClientSession) ([]*mcp.Tool, error) {
	return collect(s.Tools(ctx, nil))
}

// call calls a tool, reconnecting and retrying once when the connection,
// not the server, failed: a server that restarted forgets its sessions, and
// the dialog should not see that. An error the server answered (JSON-RPC
// error, isError result) and the caller's deadline are never retried. The
// trade-off: a connection that breaks after the server ran the tool but
// before the answer arrived runs it twice; MCP has no idempotency key to
// prevent that, and failing every call after a server restart is worse.
func (c *conn) call(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	var res *mcp.CallToolResult
	err := c.do(ctx, func(s *mcp.ClientSession) (err error) {
		res, err = s.CallTool(ctx, params)
		return err
	})
	return res, err
}

// do runs one request on the session with call's retry: once more on a
// new connection when the connection, not the server, failed.
func (c *conn) do(ctx context.Context, request func(*mcp.ClientSession) error) error {
	for attempt := 0; ; attempt++ {
		s, err := c.get(ctx)
		if err != nil {
			return err
		}
		err = request(s)
		if err == nil || attempt > 0 || !reconnectable(ctx, err) {
			return err
		}
		c.pool.opts.Logger.Info("mcp call failed on the connection, reconnecting", "tenant", c.target.tenantID, "server", c.target.server.Name)
		c.drop(s)
	}
}

// reconnectable says whether err came from the connection rather than from
// the server's answer.
func reconnectable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	_, answered := serverError(err)
	return !answered
}

// The SDK reports its own transport failures as JSON-RPC errors with these
// codes (its jsonrpc2 ErrClientClosing, ErrServerClosing, ErrRejected): they
// mean the request did not get an answer, not that the server refused it.
const (
	codeClientClosing = -32003
	codeServerClosing = -32004
	codeRejected      = -32005
)

// serverError returns the JSON-RPC error the server answered with, if err
// carries one. When the server did answer over HTTP, the SDK wraps its error
// before the transport marker, so the first JSON-RPC error in the chain is
// the server's.
func serverError(err error) (*jsonrpc.Error, bool) {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		return nil, false
	}
	switch rpcErr.Code {
	case codeClientClosing, codeServerClosing, codeRejected:
		return nil, false
	}
	return rpcErr, true
}
