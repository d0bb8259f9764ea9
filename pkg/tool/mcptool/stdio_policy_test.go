package mcptool_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool/mcptool"
)

// payloads are scripts an attacker would want an allowlisted command to run
// first; each creates marker when it runs.
type payloads struct {
	marker, nodeRequire, bashEnv, preload string
}

func writePayloads(t *testing.T) payloads {
	t.Helper()
	dir := t.TempDir()
	p := payloads{
		marker:      filepath.Join(dir, "pwned"),
		nodeRequire: filepath.Join(dir, "evil.js"),
		bashEnv:     filepath.Join(dir, "evil.sh"),
		preload:     filepath.Join(dir, "evil.so"),
	}
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(p.nodeRequire, "require('fs').writeFileSync("+jsString(p.marker)+", 'node');\n")
	write(p.bashEnv, "echo bash > '"+p.marker+"'\n")
	if gcc, err := exec.LookPath("gcc"); err == nil {
		src := filepath.Join(dir, "evil.c")
		write(src, `#include <stdio.h>
__attribute__((constructor)) static void pwn(void) { FILE *f = fopen("`+p.marker+`", "w"); if (f) { fputs("preload", f); fclose(f); } }
`)
		if out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", p.preload, src).CombinedOutput(); err != nil {
			t.Logf("gcc could not build the LD_PRELOAD payload (%v): %s", err, out)
			p.preload = ""
		}
	} else {
		p.preload = ""
	}
	return p
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ran reports whether a payload ran, and clears the marker.
func (p payloads) ran(t *testing.T) bool {
	t.Helper()
	_, err := os.Stat(p.marker)
	_ = os.Remove(p.marker)
	return err == nil
}

func TestATenantsEnvCannotChangeWhatAnAllowlistedCommandRuns(t *testing.T) {
	bin := everythingBin(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	p := writePayloads(t)
	// The operator allows server-everything twice: run by node directly, and
	// through a bash wrapper, written in the JSON form that keeps the
	// script's spaces and quotes inside one argument.
	allow, err := botconfig.ParseStdioAllow(`[["` + node + `", ` + jsString(bin) + `, "stdio"], ["` + bash + `", "-c", "exec node \"$0\" stdio", ` + jsString(bin) + `]]`)
	if err != nil {
		t.Fatal(err)
	}
	viaNode := botconfig.MCPServer{Name: "everything", Transport: botconfig.TransportStdio, Command: node, Args: []string{bin, "stdio"}}
	viaBash := botconfig.MCPServer{Name: "everything", Transport: botconfig.TransportStdio, Command: bash, Args: []string{"-c", `exec node "$0" stdio`, bin}}
	baseEnv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}

	cases := []struct {
		name   string
		server botconfig.MCPServer
		key    string
		value  string
		// control runs the same command outside Parley with the variable,
		// proving the payload works on this machine.
		control []string
	}{
		{"NODE_OPTIONS=--require loads a module into node", viaNode, "NODE_OPTIONS", "--require " + p.nodeRequire, []string{node, "-e", ""}},
		{"node_options in lower case is refused too", viaNode, "node_options", "--require " + p.nodeRequire, nil},
		{"BASH_ENV makes bash source a script", viaBash, "BASH_ENV", p.bashEnv, []string{bash, "-c", "true"}},
		{"ENV makes sh source a script", viaBash, "ENV", p.bashEnv, nil},
		{"LD_PRELOAD loads a library into any program", viaNode, "LD_PRELOAD", p.preload, []string{node, "-e", ""}},
		{"LD_LIBRARY_PATH swaps the libraries", viaNode, "LD_LIBRARY_PATH", filepath.Dir(p.marker), nil},
		{"BASH_FUNC_ exports a function that replaces exec", viaBash, "BASH_FUNC_exec%%", "() { echo bash > '" + p.marker + "'; }", nil},
		{"PATH points node at another program", viaBash, "PATH", filepath.Dir(p.marker), nil},
		{"npm_config_ settings reach npx", viaNode, "npm_config_node_options", "--require " + p.nodeRequire, nil},
		{"a key with = smuggles another variable", viaNode, "NODE_OPTIONS=--require " + p.nodeRequire + " X", "1", nil},
		{"PYTHONPATH and the other PYTHON* variables are refused", viaNode, "PYTHONPATH", filepath.Dir(p.marker), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.value == "" {
				t.Skip("no payload for this case on this machine")
			}
			if tc.control != nil {
				cmd := exec.Command(tc.control[0], tc.control[1:]...)
				cmd.Env = append(slices.Clone(baseEnv), tc.key+"="+tc.value)
				_ = cmd.Run()
				if !p.ran(t) {
					t.Fatalf("control: %s with %s did not run the payload; the case proves nothing", tc.control, tc.key)
				}
			}

			t.Run("the operator cannot allow the key", func(t *testing.T) {
				if keys, err := botconfig.ParseStdioEnv("API_TOKEN," + tc.key); err == nil {
					t.Fatalf("PARLEY_MCP_STDIO_ENV accepted %q: %v", tc.key, keys)
				}
			})

			server := tc.server
			server.Env = map[string]string{tc.key: tc.value}
			t.Run("validation refuses it with its pointer", func(t *testing.T) {
				cfg := botconfig.Config{BasicSettings: botconfig.BasicSettings{Name: "b"}, MCPServers: []botconfig.MCPServer{server}}
				opts := botconfig.Options{Stdio: botconfig.StdioPolicy{Allow: allow, EnvKeys: []string{tc.key}}}
				want := "/mcp_servers/0/env/" + strings.ReplaceAll(tc.key, "/", "~1")
				ps := opts.Validate(&cfg)
				if !slices.ContainsFunc(ps, func(p botconfig.Problem) bool { return p.Pointer == want }) {
					t.Fatalf("problems %v, want one at %s", ps, want)
				}
			})

			t.Run("the pool refuses to spawn it even when told to allow it", func(t *testing.T) {
				pool := newPool(t, mcptool.Options{Stdio: botconfig.StdioPolicy{Allow: allow, EnvKeys: []string{tc.key}}, StdioEnv: baseEnv})
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				_, err := mcptool.Tools(ctx, pool, tenant, server, nil)
				if err == nil {
					t.Fatal("Tools succeeded")
				}
				if p.ran(t) {
					t.Fatal("the payload ran")
				}
				if got := pool.Stats().Connects; got != 0 {
					t.Errorf("Connects = %d, want 0: nothing may start", got)
				}
			})
		})
	}

	t.Run("the allowlisted node argv with an extra, missing or reordered argument is refused", func(t *testing.T) {
		for _, args := range [][]string{
			{bin, "stdio", "--require=" + p.nodeRequire},
			{"--require", p.nodeRequire, bin, "stdio"},
			{"stdio", bin},
			{bin},
			{bin + " stdio"},
		} {
			server := botconfig.MCPServer{Name: "everything", Transport: botconfig.TransportStdio, Command: node, Args: args}
			pool := newPool(t, mcptool.Options{Stdio: botconfig.StdioPolicy{Allow: allow}, StdioEnv: baseEnv})
			_, err := mcptool.Tools(context.Background(), pool, tenant, server, nil)
			if err == nil || !strings.Contains(err.Error(), "not on the operator's allowlist") {
				t.Errorf("args %q: err = %v, want an allowlist refusal", args, err)
			}
			if p.ran(t) || pool.Stats().Connects != 0 {
				t.Errorf("args %q: something ran", args)
			}
		}
	})

	t.Run("an allowed key reaches the server, and nothing else of Parley's environment does", func(t *testing.T) {
		t.Setenv("PARLEY_SECRET_KEY", "must-not-leak")
		for _, server := range []botconfig.MCPServer{viaNode, viaBash} {
			server.Env = map[string]string{"EVERYTHING_NOTE": "{{secrets.note}}"}
			pool := newPool(t, mcptool.Options{Stdio: botconfig.StdioPolicy{Allow: allow, EnvKeys: []string{"EVERYTHING_NOTE"}}, StdioEnv: baseEnv})
			tools := mustTools(t, pool, server, botconfig.Vars{"secrets.note": "n-42"})
			res := mustCall(t, tools, "everything__get-env", `{}`)
			var env map[string]string
			if err := json.Unmarshal([]byte(res.Content), &env); err != nil {
				t.Fatalf("get-env: %v in %q", err, res.Content)
			}
			if env["EVERYTHING_NOTE"] != "[redacted]" {
				t.Errorf("EVERYTHING_NOTE = %q, want the secret (redacted in the result)", env["EVERYTHING_NOTE"])
			}
			for k := range env {
				// bash adds its own bookkeeping (PWD, SHLVL, _); nothing from Parley.
				if !slices.Contains([]string{"PATH", "HOME", "EVERYTHING_NOTE", "PWD", "SHLVL", "_"}, k) {
					t.Errorf("%s: the server sees %s, which Parley did not give it", server.Command, k)
				}
			}
			if p.ran(t) {
				t.Fatal("a payload ran")
			}
		}
	})
}
