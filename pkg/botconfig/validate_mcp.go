package botconfig

import (
	"strings"
	"time"

	"github.com/parleyhq/parley/pkg/llm"
)

// mcpServers checks each MCP server's shape for its transport.
func (c *checker) mcpServers() {
	for i, s := range c.cfg.MCPServers {
		at := ptr("/mcp_servers", i)
		c.mcpServerName(s, at)
		switch s.Transport {
		case TransportHTTP, TransportSSE:
			checkRemoteURL(&c.ps, ptr(at, "url"), s.URL)
			if s.Command != "" || len(s.Args) > 0 || len(s.Env) > 0 {
				c.ps.add(ptr(at, "command"), "command, args and env are for the stdio transport; remove them or set transport to \"stdio\"")
			}
			c.mcpTemplates(s.Headers, ptr(at, "headers"))
		case TransportStdio:
			if strings.TrimSpace(s.Command) == "" {
				c.ps.add(ptr(at, "command"), "the stdio transport needs a command to run")
			}
			if s.URL != "" || len(s.Headers) > 0 {
				c.ps.add(ptr(at, "url"), "url and headers are for the http and sse transports; remove them or change transport")
			}
			c.mcpTemplates(s.Env, ptr(at, "env"))
			for _, k := range sortedKeys(s.Env) {
				if err := c.opts.Stdio.CheckEnvKey(k); err != nil {
					c.ps.add(ptr(ptr(at, "env"), k), "%v", err)
				}
			}
		default:
			c.ps.add(ptr(at, "transport"), "transport must be \"http\", \"sse\" or \"stdio\"")
		}
		if !validTimeout(s.Timeout) {
			c.ps.add(ptr(at, "timeout"), "timeout must be more than 0 and at most %d seconds", int(MaxEndpointTimeout/time.Second))
		}
		if s.Ephemeral < 0 || s.Ephemeral > 100 {
			c.ps.add(ptr(at, "ephemeral"), "ephemeral must be between 0 (keep all outputs) and 100")
		}
		c.mcpToolNames(s, s.Tools.Allow, ptr(ptr(at, "tools"), "allow"))
		c.mcpToolNames(s, s.Tools.Deny, ptr(ptr(at, "tools"), "deny"))
	}
}

func (c *checker) mcpServerName(s MCPServer, at string) {
	at = ptr(at, "name")
	switch {
	case !llm.ValidToolName(s.Name) || len(s.Name) > maxMCPServerName:
		c.ps.add(at, "MCP server name %q must be 1-%d letters, digits, '_' or '-', leaving room for its tools' names", s.Name, maxMCPServerName)
	case strings.Contains(s.Name, MCPToolSeparator):
		c.ps.add(at, "MCP server name %q must not contain %q, which separates server and tool names", s.Name, MCPToolSeparator)
	default:
		if prev, ok := c.names[s.Name]; ok {
			c.ps.add(at, "name %q is already used at %s; tool, native tool and MCP server names must be unique", s.Name, prev)
			return
		}
		c.names[s.Name] = at
	}
}

// mcpToolNames checks that allow/deny entries give valid exposed names.
func (c *checker) mcpToolNames(s MCPServer, names []string, at string) {
	for i, name := range names {
		full := s.Name + MCPToolSeparator + name
		if name == "" || !llm.ValidToolName(full) {
			c.ps.add(ptr(at, i), "MCP tool %q would be exposed as %q, which is not 1-64 letters, digits, '_' or '-'; shorten the server name or drop the tool", name, full)
		}
	}
}

// mcpTemplates checks MCP header or env values: variables and secrets only.
func (c *checker) mcpTemplates(values map[string]string, at string) {
	for _, k := range sortedKeys(values) {
		t, err := parseTemplate(values[k])
		if err != nil {
			c.ps.add(ptr(at, k), "%v", err)
			continue
		}
		checkRefs(t, scope{vars: c.vars}, ptr(at, k), &c.ps, refNoArgs)
	}
}
