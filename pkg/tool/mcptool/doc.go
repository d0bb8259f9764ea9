// Package mcptool exposes the tools of MCP servers to the agent loop, through
// the official MCP Go SDK, over streamable HTTP ("http"), SSE ("sse") and
// stdio ("stdio").
//
// One Pool per process, built in cmd/parley and closed on shutdown:
//
//	pool := mcptool.New(mcptool.Options{
//		HTTPClient: outboundClient,    // pkg/outbound: SSRF-safe
//		Stdio:      settings.MCPStdio, // PARLEY_MCP_STDIO_ALLOW, PARLEY_MCP_STDIO_ENV
//		StdioEnv:   []string{"PATH=" + path, "HOME=" + home},
//	})
//	defer pool.Close()
//
// When a dialog starts, Tools turns one of the bot's mcp_servers into
// tool.Tools named <server>__<tool> (sanitised to ^[a-zA-Z0-9_-]{1,64}$,
// with a short hash when cut), after the config's allow/deny lists; All does
// every server in parallel and names the ones that failed:
//
//	tools, err := mcptool.All(ctx, pool, tenantID, bot.MCPServers, vars)
//	if err != nil {
//		log.Warn("some MCP servers are unavailable", "error", err) // tools holds the rest
//	}
//
// Only Tools, All and Tool.Call touch the network or start processes. Validating
// or saving a config must never call them: a tenant's config would otherwise
// make the platform dial arbitrary hosts or run commands at save time. A
// stdio server starts only if its exact argv (command and args, element by
// element) is on the operator's allowlist and every env key its config sets
// is one the operator lets tenants set (botconfig.StdioPolicy; keys such as
// NODE_OPTIONS, LD_PRELOAD or BASH_ENV, which change what a command
// executes, never are). It sees only Options.StdioEnv and those keys, never
// Parley's own environment.
//
// Connections are keyed by tenant and a hash of what a connection depends
// on (transport, URL, command line, substituted headers and env), so tenants
// never share a session and an edited endpoint or rotated secret gets a
// fresh one; editing only the allow list or timeout keeps the session. A connection
// opens on first use (concurrent first uses share one attempt), caches the
// tool list until the session changes or the server announces
// notifications/tools/list_changed, reconnects and retries once when a call
// fails on the connection (not when the server answered with an error), and
// closes after Options.IdleTimeout unused.
//
// Header and env values may hold {{var}} and {{secrets.NAME}} placeholders,
// filled from the dialog's botconfig.Vars with botconfig's escapes ("{{{{"
// for a literal "{{", "<<" for "<"); a value with a line break after
// substitution is refused. Secret values are redacted from results and
// errors, since a server may echo them back.
//
// Results: text blocks joined; images and audio as a placeholder with type
// and size; resources summarised; structured content as compact JSON unless
// a text block already carries it; isError results and JSON-RPC errors both
// become is_error results; a call past the server's timeout (default 30 s)
// is an is_error result saying so.
package mcptool
