package botconfig

import (
	"encoding/json"
	"net/http"
	"time"
)

// Bot is a compiled config: everything the runtime needs, with defaults
// applied. Compile produces it; it is immutable and safe to share between
// dialogs.
type Bot struct {
	Name      string
	ChatbotID string
	Greeting  string
	// SystemPrompt is the static prompt. Prompt adds the per-dialog facts.
	SystemPrompt string
	// Tools are the config's HTTP and client tools, in config order.
	Tools            []ToolSpec
	NativeTools      []string
	MCPServers       []MCPServer
	ContextVariables []ContextVariable
	LLM              LLMSettings
	Runtime          Runtime
	// Fingerprint is a hash of the canonical config: same config, same value.
	Fingerprint string
}

// ToolSpec is one compiled config tool.
type ToolSpec struct {
	Name                 string
	Description          string
	Parameters           json.RawMessage
	Execution            string
	RequiresConfirmation bool
	Ephemeral            int
	// Endpoint is nil for client tools.
	Endpoint *EndpointTemplate
}

// Runtime is RuntimeSettings with defaults applied.
type Runtime struct {
	MaxTurns          int
	TokenBudget       int
	Timeout           time.Duration
	ParallelToolCalls bool
	RequireDoneTool   bool
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
