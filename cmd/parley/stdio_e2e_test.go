package main

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// TestTheOperatorDecidesWhichStdioEnvKeysATenantMaySet drives the real
// server: a config's stdio env keys outside PARLEY_MCP_STDIO_ENV are refused
// with their pointers, by the save and by /v1/validate alike.
func TestTheOperatorDecidesWhichStdioEnvKeysATenantMaySet(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		env["PARLEY_PLATFORM_TOKEN"] = "e2e-platform-token-with-enough-entropy"
		env["PARLEY_MCP_STDIO_ALLOW"] = `[["node", "/srv/mcp/files.js", "--root", "/srv/data"]]`
		env["PARLEY_MCP_STDIO_ENV"] = "API_TOKEN"
		srv := startParley(t, env)
		ctx := context.Background()
		created, err := srv.client(env["PARLEY_PLATFORM_TOKEN"]).CreateTenant(ctx, apiclient.CreateTenantRequest{Slug: "acme", Name: "Acme"})
		if err != nil {
			t.Fatal(err)
		}
		admin := srv.client(created.APIKey.Key)
		config := func(env string) json.RawMessage {
			return json.RawMessage(`{"basic_settings": {"name": "Files"}, "mcp_servers": [{"name": "files", "transport": "stdio",
				"command": "node", "args": ["/srv/mcp/files.js", "--root", "/srv/data"], "env": ` + env + `}]}`)
		}
		bad := config(`{"API_TOKEN": "t", "NODE_OPTIONS": "--require /tmp/evil.js", "LOG_LEVEL": "debug"}`)
		want := []string{"/mcp_servers/0/env/LOG_LEVEL", "/mcp_servers/0/env/NODE_OPTIONS"}

		t.Run("saving refuses every key the operator did not allow, with its pointer", func(t *testing.T) {
			_, err := admin.CreateBot(ctx, "acme", "files", bad)
			e := apiError(t, err, http.StatusUnprocessableEntity)
			var got []string
			for _, d := range e.Details {
				got = append(got, d.Pointer)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("details %+v, want pointers %v", e.Details, want)
			}
		})
		t.Run("validate says the same", func(t *testing.T) {
			res, err := admin.Validate(ctx, bad)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range res.Errors {
				got = append(got, d.Pointer)
				if !strings.Contains(d.Message, "PARLEY_MCP_STDIO_ENV") && !strings.Contains(d.Message, "no config may set it") {
					t.Errorf("%s: %q does not say why", d.Pointer, d.Message)
				}
			}
			if res.Valid || !slices.Equal(got, want) {
				t.Fatalf("validate = %+v, want invalid at %v", res, want)
			}
		})
		t.Run("an allowed key saves", func(t *testing.T) {
			if _, err := admin.CreateBot(ctx, "acme", "files", config(`{"API_TOKEN": "{{secrets.files_token}}"}`)); err != nil {
				t.Fatal(err)
			}
		})
	})
}

func TestADangerousStdioEnvKeyStopsTheServerFromStarting(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"NODE_OPTIONS", "LD_PRELOAD", "BASH_ENV", "PATH"} {
		t.Run(key, func(t *testing.T) {
			_, err := LoadSettings(parleyEnv{"PARLEY_MCP_STDIO_ENV": "API_TOKEN," + key}.getenv)
			if err == nil || !strings.Contains(err.Error(), "PARLEY_MCP_STDIO_ENV") || !strings.Contains(err.Error(), key) {
				t.Fatalf("err = %v, want PARLEY_MCP_STDIO_ENV refusing %s", err, key)
			}
		})
	}
	t.Run("an ambiguous allowlist entry is refused", func(t *testing.T) {
		_, err := LoadSettings(parleyEnv{"PARLEY_MCP_STDIO_ALLOW": `node "/srv/my server.js"`}.getenv)
		if err == nil || !strings.Contains(err.Error(), "PARLEY_MCP_STDIO_ALLOW") {
			t.Fatalf("err = %v, want PARLEY_MCP_STDIO_ALLOW refused", err)
		}
	})
}
