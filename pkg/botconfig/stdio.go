package botconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// StdioPolicy is the operator's rule for stdio MCP servers, the only tenant
// config that starts a process on the server: which exact argv may run
// (PARLEY_MCP_STDIO_ALLOW) and which env keys a tenant may set on them
// (PARLEY_MCP_STDIO_ENV). Validation checks the env keys (Options.Stdio);
// mcptool checks both again before it spawns anything. The zero value runs
// nothing and allows no env key.
type StdioPolicy struct {
	// Allow lists the argv, command first, that may run, each matched
	// element by element: no extra, missing or reordered argument.
	Allow [][]string
	// EnvKeys are the env keys a tenant may set, matched exactly.
	EnvKeys []string
	// AllowAll trusts the config itself: any command, any env key except
	// the ones that change what a command executes, which no config may set
	// (parley chat --allow-stdio, where the config's author runs it).
	AllowAll bool
}

// envKeyPattern is a portable environment variable name. Anything else
// (a "=" above all) could smuggle another variable into the process.
var envKeyPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// neverEnv are keys that make an allowed command execute something else:
// preload a library, require a module, source a script, import shell
// functions, install packages from elsewhere. No config may set them, and
// the operator cannot allow them: the allowlist of keys is the real control,
// this list keeps a careless entry in it from becoming code execution.
// Compared without regard to case (npm reads npm_config_* in any case).
var neverEnv = []string{
	"PATH", "HOME", "SHELL", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "IFS", "CDPATH", "GLOBIGNORE",
	"NODE_OPTIONS", "NODE_PATH", "NODE_REPL_EXTERNAL_MODULE", "NODE_EXTRA_CA_CERTS", "NODE_TLS_REJECT_UNAUTHORIZED",
	"PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB", "RUBYOPT", "RUBYLIB",
	"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
	"GCONV_PATH", "LOCPATH", "HOSTALIASES", "RES_OPTIONS", "LOCALDOMAIN", "SSLKEYLOGFILE",
	"EDITOR", "VISUAL", "PAGER", "BROWSER", "GOFLAGS", "GOPROXY", "GOPATH", "GOTOOLCHAIN",
}

// neverEnvPrefixes extend neverEnv to whole families.
var neverEnvPrefixes = []string{
	"LD_", "DYLD_", "BASH_FUNC_", "PYTHON", "NPM_CONFIG_", "YARN_", "PNPM_", "BUN_", "DENO_",
	"UV_", "PIP_", "GEM_", "BUNDLE_", "GIT_",
}

// checkEnvKeyName says why key can never be set on a stdio server, or nil.
func checkEnvKeyName(key string) error {
	if !envKeyPattern.MatchString(key) {
		return fmt.Errorf("env key %q is not a variable name (letters, digits and '_', not starting with a digit)", key)
	}
	upper := strings.ToUpper(key)
	if slices.Contains(neverEnv, upper) || slices.ContainsFunc(neverEnvPrefixes, func(p string) bool { return strings.HasPrefix(upper, p) }) {
		return fmt.Errorf("env key %q can change what the command executes; no config may set it", key)
	}
	return nil
}

// CheckEnvKey says why a tenant may not set key on a stdio server, or nil.
func (p StdioPolicy) CheckEnvKey(key string) error {
	if err := checkEnvKeyName(key); err != nil {
		return err
	}
	if p.AllowAll || slices.Contains(p.EnvKeys, key) {
		return nil
	}
	if len(p.EnvKeys) == 0 {
		return fmt.Errorf("env key %q is not allowed: the operator allows tenants no env keys on stdio servers (PARLEY_MCP_STDIO_ENV)", key)
	}
	return fmt.Errorf("env key %q is not allowed: the operator allows only %s (PARLEY_MCP_STDIO_ENV)", key, strings.Join(p.EnvKeys, ", "))
}

// AllowsArgv reports whether argv (command first) may run.
func (p StdioPolicy) AllowsArgv(argv []string) bool {
	if p.AllowAll {
		return true
	}
	for _, allowed := range p.Allow {
		if slices.Equal(allowed, argv) {
			return true
		}
	}
	return false
}

// ParseStdioAllow reads PARLEY_MCP_STDIO_ALLOW. Two forms:
//
//   - JSON, when the value starts with "[": an array of argv arrays,
//     [["npx","-y","@modelcontextprotocol/server-everything"],["node","/srv/my server.js"]].
//     Any argument can be written this way.
//   - Simple: comma-separated command lines whose arguments are separated by
//     spaces, "npx -y @modelcontextprotocol/server-everything,node /srv/a.js".
//     No quoting exists in this form, so an entry with a quote or a backslash
//     is refused (it would be read differently than meant): use JSON for an
//     argument with a space, comma or quote.
func ParseStdioAllow(v string) ([][]string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	if strings.HasPrefix(v, "[") {
		var out [][]string
		if err := json.Unmarshal([]byte(v), &out); err != nil {
			return nil, errors.New(`the JSON form must be an array of argv arrays of strings, like [["node","/srv/server.js"]]`)
		}
		for i, argv := range out {
			if len(argv) == 0 || strings.TrimSpace(argv[0]) == "" {
				return nil, fmt.Errorf("entry %d has no command", i+1)
			}
		}
		return out, nil
	}
	var out [][]string
	for _, entry := range strings.Split(v, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		if strings.ContainsAny(entry, "\"'\\`") {
			return nil, fmt.Errorf("%q has a quote or backslash, which the comma-separated form does not interpret; write the list as JSON: [[\"cmd\",\"arg one\"]]", strings.TrimSpace(entry))
		}
		out = append(out, strings.Fields(entry))
	}
	return out, nil
}

// ParseStdioEnv reads PARLEY_MCP_STDIO_ENV: comma-separated env keys. A key
// that could change what a command executes (NODE_OPTIONS, LD_PRELOAD,
// BASH_ENV, ...) is refused: tenants can never be given it.
func ParseStdioEnv(v string) ([]string, error) {
	var out []string
	for _, key := range strings.Split(v, ",") {
		if key = strings.TrimSpace(key); key == "" {
			continue
		}
		if err := checkEnvKeyName(key); err != nil {
			return nil, err
		}
		out = append(out, key)
	}
	return out, nil
}

// Argv is the server's command line as the allowlist matches it.
func (s MCPServer) Argv() []string {
	return append([]string{s.Command}, s.Args...)
}
