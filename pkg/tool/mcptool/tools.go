package mcptool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool"
)

// Tools connects to server (or reuses the pool's connection) and returns one
// tool per server tool that the config's allow/deny lists let through, named
// <server>__<tool>, then, when the config asks for them and the server
// offers them, the tools that read its resources and get its prompts
// (catalogTools). vars fill {{name}} placeholders in headers and env. Call
// it when a dialog starts, never when validating or saving a config: it may
// open a connection or start a process.
func Tools(ctx context.Context, pool *Pool, tenantID string, server botconfig.MCPServer, vars botconfig.Vars) ([]tool.Tool, error) {
	t, err := pool.resolve(tenantID, server, vars)
	if err != nil {
		return nil, err
	}
	c, err := pool.acquire(t)
	if err != nil {
		return nil, err
	}
	defer pool.release(c)
	remote, err := c.listTools(ctx)
	if err != nil {
		return nil, err
	}
	ops := catalogOps(server.Resources, server.Prompts)
	// The catalog's tools take their names first: a server tool that
	// happens to be called read_resource gets a hashed name instead.
	taken, names := map[string]bool{}, map[string]string{}
	for _, op := range ops {
		names[op] = exposedName(server.Name, op)
		taken[names[op]] = true
	}
	tools := buildTools(pool, t, remote, taken)
	if len(ops) == 0 {
		return tools, nil
	}
	cat, err := c.listCatalog(ctx)
	if err != nil {
		// The server's tools still work; the dialog goes on without its
		// resources and prompts.
		pool.opts.Logger.Warn("mcp resources and prompts left out", "tenant", tenantID, "server", server.Name, "error", err.Error())
		return tools, nil
	}
	return append(tools, catalogTools(pool, t, cat, names)...), nil
}

// remoteTool is a server tool as listed, with what every dialog's
// definition needs worked out once per listing.
type remoteTool struct {
	name        string
	description string
	params      json.RawMessage
}

// prepare normalises a fresh listing.
func (c *conn) prepare(listed []*mcp.Tool) []remoteTool {
	out := make([]remoteTool, 0, len(listed))
	for _, rt := range listed {
		params, ok := normalizeSchema(rt.InputSchema)
		if !ok {
			c.pool.opts.Logger.Warn("mcp tool schema unusable, accepting any object", "tenant", c.target.tenantID, "server", c.target.server.Name, "tool", rt.Name)
		}
		out = append(out, remoteTool{name: rt.Name, description: description(rt), params: params})
	}
	return out
}

// buildTools names the server's tools the filter lets through, around the
// names already taken.
func buildTools(pool *Pool, t *target, remote []remoteTool, taken map[string]bool) []tool.Tool {
	isTaken := func(name string) bool { return taken[name] }
	var out []tool.Tool
	for _, rt := range remote {
		if !allowed(t.server.Tools, rt.name) {
			continue
		}
		name := uniqueName(exposedName(t.server.Name, rt.name), t.server.Name, rt.name, isTaken)
		taken[name] = true
		out = append(out, tool.KeepingLast(&Tool{
			pool:   pool,
			target: t,
			remote: rt.name,
			def:    tool.Definition{Name: name, Description: rt.description, Parameters: rt.params},
		}, t.server.Ephemeral))
	}
	return out
}

// allowed applies the config's filter: only Allow when it is set, minus Deny.
func allowed(f botconfig.MCPToolFilter, name string) bool {
	if len(f.Allow) > 0 && !slices.Contains(f.Allow, name) {
		return false
	}
	return !slices.Contains(f.Deny, name)
}

// maxDescription caps a server's tool description, which goes into every
// model request of the dialog: a third-party server should not be able to
// spend the tenant's tokens (or smuggle a long prompt) through it.
const maxDescription = 2048

func description(t *mcp.Tool) string {
	d := t.Description
	if d == "" {
		d = t.Title
	}
	if d == "" {
		return "MCP tool " + t.Name
	}
	return capDescription(d)
}

// capDescription cuts d to maxDescription bytes on a rune boundary.
func capDescription(d string) string {
	if len(d) > maxDescription {
		cut := maxDescription
		for cut > 0 && !utf8.RuneStart(d[cut]) {
			cut--
		}
		d = d[:cut] + "…"
	}
	return d
}

// Tool is one tool of an MCP server, as the model sees it.
type Tool struct {
	pool   *Pool
	target *target
	remote string
	def    tool.Definition
}

var _ tool.Tool = (*Tool)(nil)

// Definition returns the exposed name, the server's description and the
// normalised input schema.
func (t *Tool) Definition() tool.Definition { return t.def }

// Server returns the name of the MCP server in the config.
func (t *Tool) Server() string { return t.target.server.Name }

// RemoteName returns the tool's name on the server, which the exposed name
// may have had to change.
func (t *Tool) RemoteName() string { return t.remote }

// Call calls the tool on the server within the server's timeout. Every
// failure the model can act on comes back as an is_error result.
func (t *Tool) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	start := time.Now()
	return t.pool.finish(t.target, t.call(ctx, args), start), nil
}

// finish makes a server's answer fit for the model: secrets the target
// was given redacted, the size capped, its kind and duration noted.
func (p *Pool) finish(t *target, res tool.Result, start time.Time) tool.Result {
	res.Meta.Kind = "mcp"
	res.Meta.Duration = time.Since(start)
	res.Content = t.redact.redact(res.Content)
	res.Content, res.Meta.Truncated = tool.Truncate(res.Content, p.opts.MaxResultBytes)
	return res
}

func (t *Tool) call(ctx context.Context, args json.RawMessage) tool.Result {
	c, err := t.pool.acquire(t.target)
	if err != nil {
		return tool.Errorf(t.pool.describeError(t.target, t.remote, ctx, ctx, err))
	}
	defer t.pool.release(c)

	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	callCtx, cancel := context.WithTimeout(ctx, t.target.timeout)
	defer cancel()
	res, err := c.call(callCtx, &mcp.CallToolParams{Name: t.remote, Arguments: args})
	if err != nil {
		return tool.Errorf(t.pool.describeError(t.target, t.remote, ctx, callCtx, err))
	}
	return tool.Result{Content: renderResult(res), IsError: res.IsError}
}

// describeError words a failed call for the model: what the server said for
// a JSON-RPC error, a timeout as such, and otherwise only that the server
// cannot be reached. Transport details (resolved addresses, the outbound
// policy's reasons) go to the log, not into the dialog.
func (p *Pool) describeError(t *target, remote string, ctx, callCtx context.Context, err error) string {
	rpcErr, answered := serverError(err)
	switch {
	case answered:
		return fmt.Sprintf("MCP server %q rejected the call to %q: %s (code %d)", t.server.Name, remote, t.redact.redact(rpcErr.Message), rpcErr.Code)
	case errors.Is(err, ErrClosed):
		return fmt.Sprintf("MCP server %q is closed: the platform is shutting down", t.server.Name)
	case ctx.Err() == nil && callCtx.Err() != nil:
		return fmt.Sprintf("MCP tool %q of server %q did not answer within %s", remote, t.server.Name, t.timeout)
	case ctx.Err() != nil:
		return fmt.Sprintf("MCP tool %q of server %q was cancelled", remote, t.server.Name)
	}
	p.opts.Logger.Warn("mcp call failed", "tenant", t.tenantID, "server", t.server.Name, "tool", remote, "error", t.redact.redact(err.Error()))
	return fmt.Sprintf("MCP server %q is unavailable right now; the call to %q did not run or its answer was lost", t.server.Name, remote)
}
