package botconfig

import "encoding/json"

// Config is a tenant's agent config exactly as authored. Only
// BasicSettings.Name is required; Compile applies the documented defaults.
type Config struct {
	// Schema lets editors find configs/agent-config.schema.json; it is
	// otherwise ignored.
	Schema           string            `json:"$schema,omitempty"`
	BasicSettings    BasicSettings     `json:"basic_settings"`
	ActionBooks      []ActionBook      `json:"action_books,omitempty"`
	Tools            []HTTPTool        `json:"tools,omitempty"`
	NativeTools      []NativeTool      `json:"native_tools,omitempty"`
	MCPServers       []MCPServer       `json:"mcp_servers,omitempty"`
	ContextVariables []ContextVariable `json:"context_variables,omitempty"`
	// Agents are other bots of the same tenant the model may call as tools.
	Agents []AgentRef `json:"agents,omitempty"`
	// Skills are bundles of instructions and tools the model loads when it
	// needs them; only their names and descriptions are in the prompt.
	Skills  []Skill         `json:"skills,omitempty"`
	LLM     LLMSettings     `json:"llm"`
	Runtime RuntimeSettings `json:"runtime"`
	// Memory lets the bot keep notes about an end user across dialogs.
	Memory *MemorySettings `json:"memory,omitempty"`
	// Knowledge lets the bot answer from the tenant's knowledge bases,
	// citing them.
	Knowledge *KnowledgeSettings `json:"knowledge,omitempty"`
	// Guardrails mask personal data and screen what is said (guardrails.go).
	Guardrails *GuardrailSettings `json:"guardrails,omitempty"`
}

// BasicSettings is the bot's identity.
type BasicSettings struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Background  string `json:"background,omitempty"`
	Language    string `json:"language,omitempty"`
	Tone        string `json:"tone,omitempty"`
	ChatbotID   string `json:"chatbot_id,omitempty"`
	Greeting    string `json:"greeting,omitempty"`
	// IncludeDate tells the model today's date (and weekday) in Timezone,
	// at the start of every run.
	IncludeDate bool `json:"include_date,omitempty"`
	// Timezone is the IANA zone of that date, e.g. "Europe/Berlin";
	// default UTC.
	Timezone string `json:"timezone,omitempty"`
}

// ActionBook is one playbook rule: when Condition holds, do Action, using Tools.
type ActionBook struct {
	Condition string   `json:"condition"`
	Action    string   `json:"action"`
	Tools     []string `json:"tools,omitempty"`
}

// Tool execution modes.
const (
	ExecutionServer = "server" // the platform calls the endpoint (default)
	ExecutionClient = "client" // the caller runs the tool; the loop pauses
)

// HTTPTool is a tool declared in the config: an HTTP endpoint the platform
// calls, or (Execution "client") a call handed to the caller.
type HTTPTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Endpoint    *Endpoint       `json:"endpoint,omitempty"`
	// Execution is "server" (default) or "client".
	Execution            string `json:"execution,omitempty"`
	RequiresConfirmation bool   `json:"requires_confirmation,omitempty"`
	// Ephemeral keeps only the most recent outputs of this tool in the model's
	// context; older ones are replaced by a placeholder. 0 keeps all.
	Ephemeral int `json:"ephemeral,omitempty"`
	// ShowToEndUser lets end users (pk_ callers) see the tool's arguments
	// and results; otherwise they see its name and success only.
	ShowToEndUser bool `json:"show_to_end_user,omitempty"`
}

// Endpoint is an HTTP request template. See the README for the placeholder
// rules: <param> for the model's arguments, {{var}} for context variables.
type Endpoint struct {
	URL         string            `json:"url"`
	Method      string            `json:"method,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	QueryParams map[string]string `json:"query_params,omitempty"`
	// Body is any JSON value; strings in it are templates.
	Body json.RawMessage `json:"body,omitempty"`
	// Timeout in seconds.
	Timeout float64 `json:"timeout,omitempty"`
}

// MCP transports.
const (
	TransportHTTP  = "http"
	TransportSSE   = "sse"
	TransportStdio = "stdio"
)

// MCPServer is an MCP server whose tools the bot may use, exposed to the model
// as <name>__<tool>.
type MCPServer struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	// URL for the http and sse transports.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Command and Args for the stdio transport.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// Timeout per call, in seconds.
	Timeout float64 `json:"timeout,omitempty"`
	// ShowToEndUser lets end users see the arguments and results of the
	// server's tools, as HTTPTool.ShowToEndUser does for one tool.
	ShowToEndUser bool          `json:"show_to_end_user,omitempty"`
	Tools         MCPToolFilter `json:"tools,omitempty"`
	// Enabled false keeps the server in the config (still validated) but
	// skips it: no connection, no tools. Nil means true, as in the seed's
	// mcp_servers JSON.
	Enabled *bool `json:"enabled,omitempty"`
	// Ephemeral keeps only the most recent outputs of each of the server's
	// tools in the model's context; 0 keeps all.
	Ephemeral int `json:"ephemeral,omitempty"`
	// Resources exposes the server's resources to the model as the tools
	// <name>__list_resources and <name>__read_resource, when it offers any.
	Resources bool `json:"resources,omitempty"`
	// Prompts exposes the server's prompts as the tool <name>__get_prompt,
	// when it offers any.
	Prompts bool `json:"prompts,omitempty"`
}

// IsEnabled reports whether the server is used: Enabled is unset or true.
func (s MCPServer) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// MCPToolFilter narrows the server's tools: only Allow (when set), minus Deny.
type MCPToolFilter struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// ContextVariable is a value the platform fills per dialog (from the API
// caller, the widget page or the end user's signed token), usable as
// {{name}} in endpoints.
type ContextVariable struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
	// ExposeToLLM puts the value in the system prompt as a fact.
	ExposeToLLM bool   `json:"expose_to_llm,omitempty"`
	Default     string `json:"default,omitempty"`
	// Source says who may set the value: SourceServer (the default),
	// SourcePage or SourceIdentity.
	Source string `json:"source,omitempty"`
	// Claim names the token claim of an identity variable; default Name.
	Claim string `json:"claim,omitempty"`
}

// Where a context variable's value may come from.
const (
	// SourceServer: only server-side callers (sk_ keys, admins) set it.
	SourceServer = "server"
	// SourcePage: the widget page (a pk_ key) may set it too.
	SourcePage = "page"
	// SourceIdentity: a claim of the end user's verified signed token;
	// server-side callers may also set it.
	SourceIdentity = "identity"
)

// From is where the variable's value may come from, SourceServer unless
// the config says otherwise.
func (v ContextVariable) From() string {
	if v.Source == "" {
		return SourceServer
	}
	return v.Source
}

// ClaimName is the token claim an identity variable is read from.
func (v ContextVariable) ClaimName() string {
	if v.Claim == "" {
		return v.Name
	}
	return v.Claim
}

// LLMSettings chooses the provider and model.
type LLMSettings struct {
	// Provider names the provider the model is asked of; "" is the
	// server's default provider.
	Provider       string   `json:"provider,omitempty"`
	Model          string   `json:"model,omitempty"`
	Temperature    *float64 `json:"temperature,omitempty"`
	MaxTokens      int      `json:"max_tokens,omitempty"`
	FallbackModels []string `json:"fallback_models,omitempty"`
	// StrictTools offers the tools in OpenAI's strict mode (structured
	// outputs): the model's arguments then always match their schemas.
	StrictTools bool `json:"strict_tools,omitempty"`
	// Fallbacks are tried in order, after the fallback models, when a
	// call fails in a way a retry may fix (an overload among them).
	Fallbacks []Fallback `json:"fallbacks,omitempty"`
	// ToolChoice is "auto" (the default), "none", "required" or a tool's
	// name; a forced choice holds for the first model call of a run.
	ToolChoice string `json:"tool_choice,omitempty"`
	// ThinkingBudget turns on extended thinking with this many tokens, on
	// providers that have it (Anthropic); 0 is off.
	ThinkingBudget int `json:"thinking_budget,omitempty"`
	// QuotaDowngrade moves the bot to a cheaper model once its tenant has
	// used this share of its daily token quota.
	QuotaDowngrade *QuotaDowngrade `json:"quota_downgrade,omitempty"`
	// Images says whether the bot's models read images the user sends;
	// nil leaves it to the model catalog.
	Images *bool `json:"images,omitempty"`
}

// QuotaDowngrade is the model a bot answers with once its tenant nears its
// daily token quota.
type QuotaDowngrade struct {
	// At is the share of the daily quota, above 0 and at most 1, from which
	// the downgrade applies.
	At       float64 `json:"at"`
	Provider string  `json:"provider,omitempty"`
	Model    string  `json:"model"`
}

// Fallback is a provider and model to move a turn to.
type Fallback struct {
	// Provider is "" for the server's default provider.
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model"`
}

// RuntimeSettings limits one run of the loop and shapes its context.
type RuntimeSettings struct {
	MaxTurns          int   `json:"max_turns,omitempty"`
	TokenBudget       int   `json:"token_budget,omitempty"`
	TimeoutSeconds    int   `json:"timeout_seconds,omitempty"`
	ParallelToolCalls *bool `json:"parallel_tool_calls,omitempty"`
	RequireDoneTool   bool  `json:"require_done_tool,omitempty"`
	// Compaction summarises older messages when the dialog nears the
	// model's context window.
	Compaction *CompactionSettings `json:"compaction,omitempty"`
	// TerminationSummary asks the model for a short closing answer when a
	// limit cuts a run short; default true.
	TerminationSummary *bool `json:"termination_summary,omitempty"`
	// MaxAgentDepth bounds how deep calls to agents nest below this bot,
	// 1-5; default 2.
	MaxAgentDepth int `json:"max_agent_depth,omitempty"`
}

// CompactionSettings are runtime.compaction, named as in the seed's
// CompactionConfig.
type CompactionSettings struct {
	// Enabled false never summarises; default true.
	Enabled *bool `json:"enabled,omitempty"`
	// ThresholdRatio is the share of the context window that triggers a
	// summary, more than 0 and at most 1; default 0.8.
	ThresholdRatio float64 `json:"threshold_ratio,omitempty"`
	// KeepRecent messages stay verbatim after a summary, 1-50; default 6.
	KeepRecent int `json:"keep_recent,omitempty"`
	// SummaryPrompt replaces the built-in request for the summary.
	SummaryPrompt string `json:"summary_prompt,omitempty"`
}
