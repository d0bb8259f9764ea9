package botconfig

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// Bot is a compiled config: everything the runtime needs, with defaults
// applied. Compile produces it; it is immutable and safe to share between
// dialogs.
type Bot struct {
	Name      string
	ChatbotID string
	Greeting  string
	// Description says what the bot is for (basic_settings.description);
	// the MCP face gives it to clients as the server's instructions.
	Description string
	// SystemPrompt is the static prompt. Prompt adds the per-dialog facts.
	SystemPrompt string
	// Tools are the config's HTTP and client tools, in config order.
	Tools       []ToolSpec
	NativeTools []string
	// NativeKeepLast maps the native tools the config marks ephemeral to
	// how many of their latest outputs the model keeps seeing.
	NativeKeepLast map[string]int
	// MCPServers are the enabled servers, in config order.
	MCPServers []MCPServer
	// mcpIndex is each MCPServers entry's index in the config's
	// mcp_servers, which skips disabled servers.
	mcpIndex         []int
	ContextVariables []ContextVariable
	// Agents are the other bots the model may call, as tools.
	Agents []AgentSpec
	// Skills are loaded by the model with the load_skill tool.
	Skills  []SkillSpec
	LLM     LLMSettings
	Runtime Runtime
	// Memory says whether the bot keeps notes about end users.
	Memory Memory
	// Knowledge is the bases the bot answers from; none without the
	// config's knowledge section.
	Knowledge Knowledge
	// Guardrails mask personal data and screen what is said.
	Guardrails Guardrails
	// Fingerprint is a hash of the canonical config: same config, same value.
	Fingerprint string
	// dateIn is the zone Prompt gives today's date in; nil leaves it out.
	dateIn *time.Location
}

// ToolSpec is one compiled config tool.
type ToolSpec struct {
	Name                 string
	Description          string
	Parameters           json.RawMessage
	Execution            string
	RequiresConfirmation bool
	Ephemeral            int
	ShowToEndUser        bool
	// Endpoint is nil for client tools.
	Endpoint *EndpointTemplate
}

// ShowsToEndUser reports whether end users (pk_ callers) may see the
// arguments and results of calls to the tool the model knows as name: a
// config tool or an MCP server with show_to_end_user. Native tools are the
// platform's own and never shown; an unknown name is not shown either.
func (b *Bot) ShowsToEndUser(name string) bool {
	for _, t := range b.Tools {
		if t.Name == name {
			return t.ShowToEndUser
		}
	}
	for _, s := range b.MCPServers {
		if strings.HasPrefix(name, s.Name+MCPToolSeparator) {
			return s.ShowToEndUser
		}
	}
	return false
}

// Runtime is RuntimeSettings with defaults applied.
type Runtime struct {
	MaxTurns           int
	TokenBudget        int
	Timeout            time.Duration
	ParallelToolCalls  bool
	RequireDoneTool    bool
	TerminationSummary bool
	Compaction         Compaction
	// MaxAgentDepth bounds how deep agent calls nest below this bot.
	MaxAgentDepth int
}

// Compaction is CompactionSettings with defaults applied. An empty
// SummaryPrompt means the loop's built-in one.
type Compaction struct {
	Enabled        bool
	ThresholdRatio float64
	KeepRecent     int
	SummaryPrompt  string
}

// RenderedRequest is an endpoint template filled with one call's arguments
// and the dialog's variables, ready to send through pkg/outbound.
type RenderedRequest struct {
	Method  string
	URL     string
	Header  http.Header
	Body    []byte // nil when the endpoint has no body
	Timeout time.Duration
	// secrets holds the secret values used, so Redact can scrub them.
	secrets []string
}
