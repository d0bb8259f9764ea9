package botconfig

import (
	"cmp"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// SecretUse is one place a bot sends a tenant secret: the secret's name, the
// origin that receives it, and the JSON pointer of the tool or MCP server in
// the config that sends it.
type SecretUse struct {
	Secret string
	// Origin is scheme://host[:port] in lower case without a default port,
	// or "stdio:<command line>" for a stdio MCP server, which receives its
	// secrets in its environment.
	Origin  string
	Pointer string
}

// SecretUses lists every (secret, origin, pointer) the bot's
// {{secrets.NAME}} placeholders make, sorted and without repeats. The
// placement rules keep placeholders out of an origin, so the origin a secret
// goes to is fixed by the config: whoever may choose it may read the secret.
func (b *Bot) SecretUses() []SecretUse {
	var uses []SecretUse
	add := func(origin, pointer string, secrets []string) {
		for _, s := range secrets {
			uses = append(uses, SecretUse{Secret: s, Origin: origin, Pointer: pointer})
		}
	}
	for i, t := range b.Tools {
		if t.Endpoint != nil {
			add(canonicalOrigin(t.Endpoint.origin), ptr(ptr("/tools", i), "endpoint"), t.Endpoint.secrets())
		}
	}
	for i, s := range b.MCPServers {
		at := i
		if i < len(b.mcpIndex) {
			at = b.mcpIndex[i]
		}
		add(mcpOrigin(s), ptr("/mcp_servers", at), mcpSecrets(s))
	}
	slices.SortFunc(uses, func(a, b SecretUse) int {
		return cmp.Or(cmp.Compare(a.Secret, b.Secret), cmp.Compare(a.Origin, b.Origin), cmp.Compare(a.Pointer, b.Pointer))
	})
	return slices.Compact(uses)
}

// SecretDestinations maps each secret the bot uses to the sorted origins it
// is sent to (see SecretUse.Origin).
func (b *Bot) SecretDestinations() map[string][]string {
	out := map[string][]string{}
	for _, u := range b.SecretUses() {
		if o := out[u.Secret]; len(o) == 0 || o[len(o)-1] != u.Origin {
			out[u.Secret] = append(o, u.Origin)
		}
	}
	return out
}

// secrets lists the secret names anywhere in the endpoint: path, query,
// headers and body.
func (t *EndpointTemplate) secrets() []string {
	var names []string
	names = t.path.secrets(names)
	for _, q := range t.query {
		names = q.value.secrets(names)
	}
	for _, h := range t.headers {
		names = h.value.secrets(names)
	}
	return t.body.secrets(names)
}

func (n *bodyNode) secrets(names []string) []string {
	if n == nil {
		return names
	}
	names = n.tmpl.secrets(names)
	for _, v := range n.values {
		names = v.secrets(names)
	}
	return names
}

// secrets appends the names of t's {{secrets.NAME}} placeholders to names.
func (t strTemplate) secrets(names []string) []string {
	for _, s := range t {
		if name, ok := strings.CutPrefix(s.text, SecretPrefix); ok && s.kind == segVar {
			names = append(names, name)
		}
	}
	return names
}

// mcpSecrets lists the secrets in an MCP server's headers and env. Compile
// parsed these values already; one that no longer parses holds no
// placeholder a connection would fill.
func mcpSecrets(s MCPServer) []string {
	var names []string
	for _, values := range []map[string]string{s.Headers, s.Env} {
		for _, k := range sortedKeys(values) {
			if t, err := parseTemplate(values[k]); err == nil {
				names = t.secrets(names)
			}
		}
	}
	return names
}

// mcpOrigin is where an MCP server's secrets go: its URL's origin, or for
// stdio the argv the operator's allowlist names, since the program and its
// arguments decide where an environment variable ends up. The argv is
// written as a JSON array, so ["a b"] and ["a", "b"] are two destinations.
func mcpOrigin(s MCPServer) string {
	if s.Transport == TransportStdio {
		argv, _ := json.Marshal(s.Argv())
		return "stdio:" + string(argv)
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		return s.URL
	}
	return canonicalOrigin(u.Scheme + "://" + u.Host)
}

// canonicalOrigin writes an origin the way browsers compare them, so
// "HTTPS://API.example.com:443" and "https://api.example.com" are one
// destination. Text that does not parse is returned as written: it then
// matches only itself, which errs on the side of asking for approval.
func canonicalOrigin(origin string) string {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return origin
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Host)
	switch port := u.Port(); {
	case scheme == "https" && port == "443", scheme == "http" && port == "80":
		host = strings.TrimSuffix(host, ":"+port)
	}
	return scheme + "://" + host
}
