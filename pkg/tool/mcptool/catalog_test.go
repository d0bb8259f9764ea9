package mcptool_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool/mcptool"
)

func TestServerEverythingResourcesAndPromptsReachTheModelAsTools(t *testing.T) {
	bin := everythingBin(t)
	cases := []struct {
		name  string
		setup func(t *testing.T, server botconfig.MCPServer) (*mcptool.Pool, botconfig.MCPServer)
	}{
		{"over stdio", func(t *testing.T, server botconfig.MCPServer) (*mcptool.Pool, botconfig.MCPServer) {
			server.Transport, server.Command, server.Args = botconfig.TransportStdio, bin, []string{"stdio"}
			return newPool(t, mcptool.Options{Stdio: allowing(server)}), server
		}},
		{"over streamable HTTP", func(t *testing.T, server botconfig.MCPServer) (*mcptool.Pool, botconfig.MCPServer) {
			base, _ := startEverything(t, bin, "streamableHttp")
			server.Transport, server.URL = botconfig.TransportHTTP, base+"/mcp"
			return newPool(t, mcptool.Options{HTTPClient: outboundClient(t, base)}), server
		}},
	}
	const features = "demo://resource/static/document/features.md"
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pool, server := tc.setup(t, botconfig.MCPServer{Name: "everything", Resources: true, Prompts: true})
			tools := mustTools(t, pool, server, nil)
			for _, name := range []string{"everything__list_resources", "everything__read_resource", "everything__get_prompt", "everything__echo"} {
				if tools[name] == nil {
					t.Fatalf("no %s among %v", name, names(tools))
				}
			}
			t.Run("the read tool's description names resources", func(t *testing.T) {
				if d := tools["everything__read_resource"].Definition().Description; !strings.Contains(d, features) {
					t.Errorf("description %q", d)
				}
			})
			t.Run("list_resources lists resources and templates", func(t *testing.T) {
				wantContent(t, mustCall(t, tools, "everything__list_resources", `{}`), false, features, "demo://resource/dynamic/text/{resourceId}")
			})
			t.Run("read_resource reads a listed resource", func(t *testing.T) {
				wantContent(t, mustCall(t, tools, "everything__read_resource", `{"uri":"`+features+`"}`), false, "# Everything Server - Features")
			})
			t.Run("read_resource fills a template's URI", func(t *testing.T) {
				wantContent(t, mustCall(t, tools, "everything__read_resource", `{"uri":"demo://resource/dynamic/text/7"}`), false, "demo://resource/dynamic/text/7")
			})
			t.Run("a binary resource becomes a placeholder", func(t *testing.T) {
				wantContent(t, mustCall(t, tools, "everything__read_resource", `{"uri":"demo://resource/dynamic/blob/7"}`), false, "[resource <demo://resource/dynamic/blob/7>: ", " bytes]")
			})
			t.Run("an unknown resource is an error result", func(t *testing.T) {
				wantContent(t, mustCall(t, tools, "everything__read_resource", `{"uri":"demo://nothing/here"}`), true, "everything")
			})
			t.Run("get_prompt fills a prompt's arguments", func(t *testing.T) {
				wantContent(t, mustCall(t, tools, "everything__get_prompt", `{"name":"args-prompt","arguments":{"city":"Berlin"}}`), false,
					`Prompt "args-prompt"`, "user: What's weather in Berlin?")
			})
			t.Run("get_prompt offers exactly the server's prompts, with their arguments described", func(t *testing.T) {
				def := tools["everything__get_prompt"].Definition()
				var schema struct {
					Properties struct {
						Name struct {
							Enum []string `json:"enum"`
						} `json:"name"`
					} `json:"properties"`
				}
				if err := json.Unmarshal(def.Parameters, &schema); err != nil {
					t.Fatal(err)
				}
				if !slices.Contains(schema.Properties.Name.Enum, "simple-prompt") || !slices.Contains(schema.Properties.Name.Enum, "args-prompt") {
					t.Errorf("prompt names %v", schema.Properties.Name.Enum)
				}
				if !strings.Contains(def.Description, "args-prompt") || !strings.Contains(def.Description, "city (required)") {
					t.Errorf("description %q", def.Description)
				}
			})
		})
	}
	t.Run("off by default, and each kind only when asked", func(t *testing.T) {
		server := botconfig.MCPServer{Name: "everything", Transport: botconfig.TransportStdio, Command: bin, Args: []string{"stdio"}}
		pool := newPool(t, mcptool.Options{Stdio: allowing(server)})
		if tools := mustTools(t, pool, server, nil); tools["everything__read_resource"] != nil || tools["everything__get_prompt"] != nil {
			t.Errorf("tools %v without resources or prompts asked", names(tools))
		}
		server.Prompts = true
		if tools := mustTools(t, pool, server, nil); tools["everything__read_resource"] != nil || tools["everything__get_prompt"] == nil {
			t.Errorf("tools %v with prompts only", names(tools))
		}
	})
}
