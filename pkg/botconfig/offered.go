package botconfig

import (
	"encoding/json"
	"slices"
)

// Tool kinds as Offered reports them.
const (
	KindHTTP   = "http"
	KindClient = "client"
	KindNative = "native"
	KindMCP    = "mcp"
)

// OfferedTool is one tool a compiled bot gives the model, as the validate
// command and endpoint list it.
type OfferedTool struct {
	Name        string          `json:"name"`
	Kind        string          `json:"kind"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// Offered lists the bot's tools in the order the prompt describes them:
// config tools, native tools (search_knowledge last), then MCP tools. An MCP server with an allow
// list appears as its allowed tools; without one, as "<server>__*", because
// its tools are known only once the server is reached, which compiling never
// does.
func (b *Bot) Offered() []OfferedTool {
	out := []OfferedTool{}
	for _, t := range b.Tools {
		kind := KindHTTP
		if t.Execution == ExecutionClient {
			kind = KindClient
		}
		out = append(out, OfferedTool{Name: t.Name, Kind: kind, Description: t.Description, Parameters: t.Parameters})
	}
	for _, n := range b.NativeTools {
		out = append(out, OfferedTool{Name: n, Kind: KindNative})
	}
	if b.Knowledge.Mode == KnowledgeModeTool {
		out = append(out, OfferedTool{Name: KnowledgeSearchTool, Kind: KindNative})
	}
	for _, s := range b.MCPServers {
		names := []string{"*"}
		if len(s.Tools.Allow) > 0 {
			names = s.Tools.Allow
		}
		for _, n := range names {
			if !slices.Contains(s.Tools.Deny, n) {
				out = append(out, OfferedTool{Name: s.Name + MCPToolSeparator + n, Kind: KindMCP})
			}
		}
	}
	return out
}
