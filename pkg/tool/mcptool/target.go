package mcptool

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/parleyhq/parley/pkg/botconfig"
)

// DefaultCallTimeout bounds one tool call when the server config sets none.
const DefaultCallTimeout = 30 * time.Second

// target is one server config resolved for one tenant and one set of dialog
// vars: everything a connection needs, and the pool key that names it.
type target struct {
	tenantID string
	server   botconfig.MCPServer
	url      *url.URL          // http and sse
	headers  map[string]string // substituted
	env      map[string]string // substituted, stdio only
	timeout  time.Duration
	redact   redactor
	// key identifies the connection: the tenant plus a hash of what the
	// connection depends on (transport, URL, command line, substituted headers
	// and env), so an edited endpoint or a rotated secret gets a new
	// connection, while identical dialogs, or an edited allow list or
	// timeout, share one.
	key string
}

// resolve checks server and substitutes vars into its headers and env. It
// never connects or spawns anything: a stdio command line that is not
// allowed is refused here.
func (p *Pool) resolve(tenantID string, server botconfig.MCPServer, vars botconfig.Vars) (*target, error) {
	if server.Name == "" {
		return nil, fmt.Errorf("mcp server: name is empty")
	}
	used := map[string]struct{}{}
	headers, err := expand(server.Name, "header", server.Headers, vars, used)
	if err != nil {
		return nil, err
	}
	t := &target{tenantID: tenantID, server: server, headers: headers, timeout: DefaultCallTimeout}
	if server.Timeout > 0 {
		t.timeout = time.Duration(server.Timeout * float64(time.Second))
	}
	switch server.Transport {
	case botconfig.TransportHTTP, botconfig.TransportSSE:
		if t.url, err = parseRemoteURL(server); err != nil {
			return nil, err
		}
		// A client without a Transport would use net/http's default one,
		// which dials anything: only the outbound client may reach tenant URLs.
		if p.opts.HTTPClient == nil || p.opts.HTTPClient.Transport == nil {
			return nil, fmt.Errorf("mcp server %q: remote servers are disabled: the pool has no outbound HTTP client", server.Name)
		}
	case botconfig.TransportStdio:
		if err := p.allowStdio(server); err != nil {
			return nil, err
		}
		if t.env, err = expand(server.Name, "env", server.Env, vars, used); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("mcp server %q: unknown transport %q (want http, sse or stdio)", server.Name, server.Transport)
	}
	t.redact = newRedactor(used)
	t.key = fingerprint(tenantID, server, headers, t.env)
	return t, nil
}

func parseRemoteURL(server botconfig.MCPServer) (*url.URL, error) {
	u, err := url.Parse(server.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("mcp server %q: url must be an absolute http or https URL", server.Name)
	}
	return u, nil
}

// allowStdio refuses a stdio server the operator's policy does not allow:
// its argv must be on the allowlist element by element, and every env key
// must be one tenants may set. Validation checked the keys when the config
// was saved; this check holds even if the policy changed since, or the
// config never went through validation.
func (p *Pool) allowStdio(server botconfig.MCPServer) error {
	if server.Command == "" {
		return fmt.Errorf("mcp server %q: stdio transport needs a command", server.Name)
	}
	if !p.opts.Stdio.AllowsArgv(server.Argv()) {
		argv, _ := json.Marshal(server.Argv())
		return fmt.Errorf("mcp server %q: stdio command %s is not on the operator's allowlist (PARLEY_MCP_STDIO_ALLOW)", server.Name, argv)
	}
	for _, k := range sortedKeys(server.Env) {
		if err := p.opts.Stdio.CheckEnvKey(k); err != nil {
			return fmt.Errorf("mcp server %q: %w", server.Name, err)
		}
	}
	return nil
}

func fingerprint(tenantID string, server botconfig.MCPServer, headers, env map[string]string) string {
	// encoding/json sorts map keys and quotes every field, so equal inputs
	// hash equally and no two inputs run together.
	b, _ := json.Marshal(struct {
		Tenant, Name, Transport, URL, Command string
		Args                                  []string
		Headers, Env                          map[string]string
	}{tenantID, server.Name, server.Transport, server.URL, server.Command, server.Args, headers, env})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}
