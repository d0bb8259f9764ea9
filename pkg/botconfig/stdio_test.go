package botconfig

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseStdioAllow(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		want    [][]string
		wantErr string
	}{
		{"empty allows nothing", "", nil, ""},
		{"the simple form splits entries on commas and arguments on spaces",
			"npx -y @modelcontextprotocol/server-everything, node  /srv/a.js",
			[][]string{{"npx", "-y", "@modelcontextprotocol/server-everything"}, {"node", "/srv/a.js"}}, ""},
		{"the JSON form keeps spaces, commas and quotes inside one argument",
			`[["bash", "-c", "exec node \"$0\" stdio, now", "/srv/a b.js"], ["node"]]`,
			[][]string{{"bash", "-c", `exec node "$0" stdio, now`, "/srv/a b.js"}, {"node"}}, ""},
		{"a quote in the simple form is refused, not guessed at", `node "/srv/a b.js"`, nil, "write the list as JSON"},
		{"a backslash in the simple form is refused", `node /srv/a\ b.js`, nil, "write the list as JSON"},
		{"JSON that is not a list of argv is refused", `["node /srv/a.js"]`, nil, "array of argv arrays"},
		{"an empty argv is refused", `[[]]`, nil, "has no command"},
		{"an empty command is refused", `[[" ", "x"]]`, nil, "has no command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStdioAllow(tt.value)
			wantParsed(t, got, err, tt.want, tt.wantErr)
		})
	}
}

func TestParseStdioEnv(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		want    []string
		wantErr string
	}{
		{"empty allows none", "", nil, ""},
		{"keys are comma-separated", " API_TOKEN, LOG_LEVEL ,", []string{"API_TOKEN", "LOG_LEVEL"}, ""},
		{"NODE_OPTIONS can never be allowed", "API_TOKEN,NODE_OPTIONS", nil, "change what the command executes"},
		{"LD_ variables can never be allowed, in any case", "ld_preload", nil, "change what the command executes"},
		{"BASH_ENV can never be allowed", "BASH_ENV", nil, "change what the command executes"},
		{"npm settings can never be allowed", "NPM_CONFIG_REGISTRY", nil, "change what the command executes"},
		{"a name with = is not a variable name", "A=B", nil, "not a variable name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStdioEnv(tt.value)
			wantParsed(t, got, err, tt.want, tt.wantErr)
		})
	}
}

// wantParsed checks a setting's parse: an error containing wantErr, or
// want.
func wantParsed[T any](t *testing.T, got T, err error, want T, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("err = %v, want one containing %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

func TestStdioEnvKeysAreTheOperatorsChoice(t *testing.T) {
	config := doc(`"mcp_servers": [
		{"name": "files", "transport": "stdio", "command": "mcp-files", "env": {"API_TOKEN": "x", "LOG_LEVEL": "debug"}},
		{"name": "other", "transport": "stdio", "command": "mcp-other", "env": {"NODE_OPTIONS": "--require /tmp/x.js"}}]`)
	tests := []struct {
		name   string
		policy StdioPolicy
		want   []string // pointers of the problems
	}{
		{"no policy allows no key", StdioPolicy{}, []string{"/mcp_servers/0/env/API_TOKEN", "/mcp_servers/0/env/LOG_LEVEL", "/mcp_servers/1/env/NODE_OPTIONS"}},
		{"listed keys pass, others are refused", StdioPolicy{EnvKeys: []string{"API_TOKEN"}}, []string{"/mcp_servers/0/env/LOG_LEVEL", "/mcp_servers/1/env/NODE_OPTIONS"}},
		{"listing a dangerous key in Go does not allow it", StdioPolicy{EnvKeys: []string{"API_TOKEN", "LOG_LEVEL", "NODE_OPTIONS"}}, []string{"/mcp_servers/1/env/NODE_OPTIONS"}},
		{"trusting the config still refuses a dangerous key", StdioPolicy{AllowAll: true}, []string{"/mcp_servers/1/env/NODE_OPTIONS"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Options{Stdio: tt.policy}.Load([]byte(config))
			ps, _ := err.(Problems)
			var got []string
			for _, p := range ps {
				got = append(got, p.Pointer)
				if !strings.Contains(p.Message, "PARLEY_MCP_STDIO_ENV") && !strings.Contains(p.Message, "no config may set it") {
					t.Errorf("%s: message %q does not say what to do", p.Pointer, p.Message)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems at %q, want %q (%v)", got, tt.want, err)
			}
		})
	}
}
