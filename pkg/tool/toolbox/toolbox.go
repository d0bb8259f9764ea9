package toolbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool"
	"github.com/parleyhq/parley/pkg/tool/builtin"
	"github.com/parleyhq/parley/pkg/tool/httptool"
	"github.com/parleyhq/parley/pkg/tool/mcptool"
)

// Options are the process-wide parts a dialog's tools are built from, plus
// the dialog's own variables.
type Options struct {
	// TenantID keys the tenant's MCP connections.
	TenantID string
	// Vars holds the dialog's system and context variables and the tenant's
	// secrets as "secrets.NAME".
	Vars botconfig.Vars
	// HTTPClient is the SSRF-safe client from outbound.NewClient, used by
	// HTTP tools.
	HTTPClient *http.Client
	// HTTP tunes HTTP tools.
	HTTP httptool.Options
	// MCP is the process's MCP connection pool; nil leaves MCP servers out
	// with a warning.
	MCP *mcptool.Pool
	// Natives resolves native tool names (builtin.NewRegistry()); required.
	Natives *builtin.Registry
	// Native is the dialog's environment for native tools (clock, memory).
	Native builtin.Env
	// UserMemory is what the bot keeps about the dialog's end user; with
	// it, a bot whose config enables memory gets remember_about_user and
	// forget_about_user. Nil (an anonymous visitor, the command line)
	// leaves them out.
	UserMemory builtin.UserMemory
	// Knowledge searches the bot's knowledge bases; with it, a bot whose
	// knowledge mode is "tool" gets search_knowledge. Nil (the command
	// line) leaves it out.
	Knowledge builtin.KnowledgeSearch
	// Schemas shares compiled argument schemas across dialogs; may be nil.
	Schemas *tool.SchemaCache
	// Agents are the bot's agents entries as tools, built by the runtime
	// (they run other bots); they come after the MCP tools.
	Agents []tool.Tool
	// ClientTools are tools the caller declares with its request (the
	// tools of an OpenAI chat completion request): the caller runs them, so
	// the loop pauses on their calls and hands them over. They come last; a
	// name one of the bot's own tools already has is left out with a
	// warning, so a caller cannot shadow the bot's tools.
	ClientTools []tool.Definition
	// Guard, when set, wraps each of the tenant's own server-side tools
	// (config HTTP tools and MCP tools, not native tools or agents) just
	// before it runs: the dialog's guardrails put real values back for
	// placeholders in its arguments and screen its output.
	Guard func(tool.Tool) tool.Tool
}

// Box is one dialog's tools.
type Box struct {
	Set *tool.Set
	// Warnings name tools left out because their source was unreachable
	// (an MCP server that is down), so the dialog still runs without them.
	Warnings []string
}

// Build returns the dialog's tools in a stable order: config tools, native
// tools, the memory tools, search_knowledge, MCP tools server by server, then agents. A config error (which validation
// should have caught) fails the build; an unreachable MCP server only adds a
// warning.
func Build(ctx context.Context, bot *botconfig.Bot, opts Options) (*Box, error) {
	if opts.Natives == nil {
		return nil, errors.New("toolbox: Options.Natives is required")
	}
	var tools []tool.Tool
	for _, spec := range bot.Tools {
		t, err := configTool(spec, opts)
		if err != nil {
			return nil, err
		}
		if spec.Execution != botconfig.ExecutionClient {
			t = guarded(t, opts.Guard)
		}
		tools = append(tools, t)
	}

	nt, err := opts.Natives.Build(bot.NativeTools, opts.Native)
	if err != nil {
		return nil, err
	}
	for _, t := range nt {
		tools = append(tools, tool.KeepingLast(t, bot.NativeKeepLast[t.Definition().Name]))
	}
	if bot.Memory.Enabled && opts.UserMemory != nil {
		tools = append(tools, builtin.UserMemoryTools(opts.UserMemory)...)
	}
	if bot.Knowledge.Mode == botconfig.KnowledgeModeTool && opts.Knowledge != nil {
		tools = append(tools, builtin.KnowledgeTools(opts.Knowledge)...)
	}

	box := &Box{}
	if len(bot.MCPServers) > 0 {
		if opts.MCP == nil {
			box.Warnings = append(box.Warnings, "MCP servers are not available here; their tools are left out")
		} else {
			mt, err := mcptool.All(ctx, opts.MCP, opts.TenantID, bot.MCPServers, opts.Vars)
			if err != nil {
				box.Warnings = append(box.Warnings, warnings(err)...)
			}
			for _, t := range mt {
				tools = append(tools, guarded(t, opts.Guard))
			}
		}
	}

	tools = append(tools, opts.Agents...)
	tools, box.Warnings = withClientTools(tools, opts.ClientTools, box.Warnings)
	box.Set, err = tool.NewSet(opts.Schemas, tools...)
	if err != nil {
		return nil, err
	}
	return box, nil
}

func configTool(spec botconfig.ToolSpec, opts Options) (tool.Tool, error) {
	if spec.Execution == botconfig.ExecutionClient {
		return clientTool{spec: spec}, nil
	}
	return httptool.New(spec, opts.HTTPClient, opts.Vars, opts.HTTP)
}

func guarded(t tool.Tool, guard func(tool.Tool) tool.Tool) tool.Tool {
	if guard == nil {
		return t
	}
	return guard(t)
}

// warnings splits a joined error into one line per failed source.
func warnings(err error) []string {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		var out []string
		for _, e := range joined.Unwrap() {
			out = append(out, e.Error())
		}
		return out
	}
	return []string{err.Error()}
}

// withClientTools appends the caller's tools whose names are free.
func withClientTools(tools []tool.Tool, defs []tool.Definition, warns []string) ([]tool.Tool, []string) {
	taken := make(map[string]bool, len(tools)+len(defs))
	for _, t := range tools {
		taken[t.Definition().Name] = true
	}
	for _, def := range defs {
		if taken[def.Name] {
			warns = append(warns, fmt.Sprintf("the caller's tool %q is left out: the bot has a tool of that name", def.Name))
			continue
		}
		taken[def.Name] = true
		tools = append(tools, clientTool{spec: botconfig.ToolSpec{Name: def.Name, Description: def.Description,
			Parameters: def.Parameters, Execution: botconfig.ExecutionClient}})
	}
	return tools, warns
}

// clientTool is a config tool the caller runs; the loop pauses on it and
// never calls Call.
type clientTool struct{ spec botconfig.ToolSpec }

func (c clientTool) Definition() tool.Definition {
	return tool.Definition{Name: c.spec.Name, Description: c.spec.Description, Parameters: c.spec.Parameters}
}

func (c clientTool) Call(context.Context, json.RawMessage) (tool.Result, error) {
	return tool.Result{}, fmt.Errorf("tool %q is executed by the client", c.spec.Name)
}

// ClientExecuted implements tool.ClientExecuted.
func (clientTool) ClientExecuted() bool { return true }

// RequiresConfirmation implements tool.ConfirmationRequired.
func (c clientTool) RequiresConfirmation() bool { return c.spec.RequiresConfirmation }
