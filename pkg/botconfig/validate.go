package botconfig

import (
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/parleyhq/parley/pkg/llm"
)

// MCPToolSeparator joins an MCP server's name and its tool's name into the
// name the model sees.
const MCPToolSeparator = "__"

// maxMCPServerName leaves room for "__" and a tool name within 64 characters.
const maxMCPServerName = 32

// Validate checks a config with the default options and returns every problem
// it has, sorted by pointer; nil when it is valid.
func Validate(cfg *Config) Problems { return Options{}.Validate(cfg) }

// Validate checks a config (however it was built) and returns every problem
// it has, sorted by pointer; nil when it is valid. It repeats the schema's
// range checks so a Config built in Go gets the same guarantees as a loaded one.
func (o Options) Validate(cfg *Config) Problems {
	_, ps := o.check(cfg)
	if len(ps) == 0 {
		return nil
	}
	return ps.sorted()
}

// checker walks one config, collecting problems and the compiled tool specs.
type checker struct {
	opts  Options
	cfg   *Config
	ps    Problems
	names map[string]string // every model-visible name or server name -> its pointer
	vars  map[string]ContextVariable
	tools []ToolSpec
}

// check validates cfg and, as a side effect, builds its tool specs; the
// specs are only meaningful when there are no problems.
func (o Options) check(cfg *Config) ([]ToolSpec, Problems) {
	c := &checker{opts: o, cfg: cfg, names: map[string]string{}, vars: map[string]ContextVariable{}}
	c.basicSettings()
	c.contextVariables()
	c.mcpServers() // before tools, so "<server>__x" tool names are caught
	c.memory()     // before tools, so a tool that takes a memory tool's name is the one named
	c.knowledge()  // likewise for search_knowledge
	c.httpTools()
	c.nativeTools()
	c.agents()
	c.actionBooks()
	c.skills()
	c.llm()
	c.runtime()
	c.guardrails()
	return c.tools, c.ps
}

func (c *checker) basicSettings() {
	b := c.cfg.BasicSettings
	if strings.TrimSpace(b.Name) == "" {
		c.ps.add("/basic_settings/name", "the bot needs a name; set basic_settings.name")
	}
	if _, err := dateLocation(b.Timezone); err != nil {
		c.ps.add("/basic_settings/timezone", "timezone %q is not an IANA time zone name like \"Europe/Berlin\" or \"America/New_York\"", b.Timezone)
	}
	if b.ChatbotID != "" && !llm.ValidToolName(b.ChatbotID) {
		c.ps.add("/basic_settings/chatbot_id", "chatbot_id %q may use only letters, digits, '_' and '-', at most 64", b.ChatbotID)
	}
}

func (c *checker) contextVariables() {
	for i, v := range c.cfg.ContextVariables {
		at := ptr("/context_variables", i)
		switch {
		case !isIdentifier(v.Name):
			c.ps.add(ptr(at, "name"), "context variable name %q must start with a letter or '_' and use only letters, digits and '_' (at most 64)", v.Name)
		case isSystemVariable(v.Name):
			c.ps.add(ptr(at, "name"), "%q is a system variable the platform fills; remove this declaration or choose another name", v.Name)
		case v.Name == "secrets":
			c.ps.add(ptr(at, "name"), `"secrets" is reserved for {{secrets.NAME}}; choose another name`)
		case c.vars[v.Name].Name != "":
			c.ps.add(ptr(at, "name"), "context variable %q is declared twice; keep one", v.Name)
		default:
			c.vars[v.Name] = v
		}
		if v.Required && v.Default != "" {
			c.ps.add(ptr(at, "default"), "a required variable never uses its default; drop default or set required to false")
		}
		switch v.Source {
		case "", SourceServer, SourcePage, SourceIdentity:
		default:
			c.ps.add(ptr(at, "source"), "source %q is not one of server (API callers only, the default), page (the widget page may set it) or identity (a claim of the signed user token)", v.Source)
		}
		if v.Claim != "" && v.Source != SourceIdentity {
			c.ps.add(ptr(at, "claim"), "claim is read only for source identity; set source to identity or drop claim")
		}
	}
}

// claim registers a model-visible name, reporting a clash with an earlier one.
func (c *checker) claim(name, at string) {
	if prev, ok := c.names[name]; ok {
		c.ps.add(at, "name %q is already used at %s; tool, native tool and MCP server names must be unique", name, prev)
		return
	}
	c.names[name] = at
	for _, s := range c.cfg.MCPServers {
		if s.Name != "" && strings.HasPrefix(name, s.Name+MCPToolSeparator) {
			c.ps.add(at, "name %q looks like a tool of MCP server %q (\"%s__tool\"); rename it", name, s.Name, s.Name)
		}
	}
}

func (c *checker) nativeTools() {
	for i, nt := range c.cfg.NativeTools {
		at := ptr("/native_tools", i)
		name := nt.Name
		if nt.Ephemeral < 0 || nt.Ephemeral > 100 {
			c.ps.add(ptr(at, "ephemeral"), "ephemeral must be between 0 (keep all outputs) and 100")
		}
		if !c.opts.knownNative(name) {
			c.ps.add(at, "unknown native tool %q; use one of %s, or declare an HTTP tool in tools", name, strings.Join(c.nativeList(), ", "))
			continue
		}
		c.claim(name, at)
	}
}

func (c *checker) nativeList() []string {
	if c.opts.NativeTools != nil {
		return c.opts.NativeTools
	}
	return defaultNativeTools
}

func (c *checker) actionBooks() {
	for i, ab := range c.cfg.ActionBooks {
		at := ptr("/action_books", i)
		if strings.TrimSpace(ab.Condition) == "" {
			c.ps.add(ptr(at, "condition"), "condition is empty; say when this rule applies (\"When the customer ...\")")
		}
		if strings.TrimSpace(ab.Action) == "" {
			c.ps.add(ptr(at, "action"), "action is empty; say what the bot should do")
		}
		for j, name := range ab.Tools {
			if !c.toolExists(name) {
				c.ps.add(ptr(ptr(at, "tools"), j), "unknown tool %q in action book; declare it in tools, native_tools, agents or mcp_servers", name)
			}
		}
	}
}

// toolExists resolves an action-book tool reference: a declared tool, an
// enabled native tool, an MCP server (all its tools) or one exposed MCP tool.
func (c *checker) toolExists(name string) bool {
	if _, ok := c.names[name]; ok {
		return true
	}
	server, tool, ok := strings.Cut(name, MCPToolSeparator)
	if !ok {
		return false
	}
	for _, s := range c.cfg.MCPServers {
		if s.Name == server {
			return s.Tools.exposes(tool) || s.catalogOp(tool)
		}
	}
	return false
}

// catalogOp reports whether op is one of the tools the server's resources
// and prompts are exposed as (mcptool's list_resources, read_resource and
// get_prompt), turned on by the config.
func (s MCPServer) catalogOp(op string) bool {
	switch op {
	case "list_resources", "read_resource":
		return s.Resources
	case "get_prompt":
		return s.Prompts
	}
	return false
}

// exposes reports whether the filter lets tool through.
func (f MCPToolFilter) exposes(tool string) bool {
	for _, d := range f.Deny {
		if d == tool {
			return false
		}
	}
	if len(f.Allow) == 0 {
		return true
	}
	for _, a := range f.Allow {
		if a == tool {
			return true
		}
	}
	return false
}

func (c *checker) llm() {
	l := c.cfg.LLM
	if l.Temperature != nil && (*l.Temperature < 0 || *l.Temperature > 2 || math.IsNaN(*l.Temperature)) {
		c.ps.add("/llm/temperature", "temperature must be between 0 and 2")
	}
	if l.MaxTokens < 0 {
		c.ps.add("/llm/max_tokens", "max_tokens must be 0 (the model's limit) or more")
	}
	for i, m := range l.FallbackModels {
		if strings.TrimSpace(m) == "" {
			c.ps.add(ptr("/llm/fallback_models", i), "fallback model name is empty; remove it")
		}
	}
	c.provider("/llm/provider", l.Provider)
	for i, f := range l.Fallbacks {
		at := ptr("/llm/fallbacks", i)
		c.provider(at+"/provider", f.Provider)
		if strings.TrimSpace(f.Model) == "" {
			c.ps.add(at+"/model", "a fallback needs a model")
		}
	}
	c.toolChoice(l)
	if d := l.QuotaDowngrade; d != nil {
		if !(d.At > 0 && d.At <= 1) {
			c.ps.add("/llm/quota_downgrade/at", "at is the share of the daily quota, above 0 and at most 1 (0.8 for 80%%)")
		}
		c.provider("/llm/quota_downgrade/provider", d.Provider)
		if strings.TrimSpace(d.Model) == "" {
			c.ps.add("/llm/quota_downgrade/model", "name the cheaper model to move to")
		}
	}
	if l.ThinkingBudget != 0 && (l.ThinkingBudget < 1024 || l.ThinkingBudget > 128_000) {
		c.ps.add("/llm/thinking_budget", "thinking_budget must be 0 (off) or between 1024 and 128000 tokens")
	}
}

// provider checks a provider name: well formed, and known when the
// options list the providers there are.
func (c *checker) provider(at, name string) {
	switch {
	case name == "":
	case !llm.ValidToolName(name):
		c.ps.add(at, "provider name %q may use only letters, digits, '_' and '-'", name)
	case c.opts.Providers != nil && !slices.Contains(c.opts.Providers, name):
		c.ps.add(at, "unknown provider %q; the providers are: %s", name, strings.Join(c.opts.Providers, ", "))
	}
}

// toolChoice checks llm.tool_choice names a choice or a tool the bot has.
func (c *checker) toolChoice(l LLMSettings) {
	choice := l.ToolChoice
	switch choice {
	case "", "auto", "none":
		return
	case "required":
	default:
		server, _, mcp := strings.Cut(choice, "__")
		if !c.isTool(choice) && !(mcp && c.isMCPServer(server)) {
			c.ps.add("/llm/tool_choice", "tool_choice %q is not auto, none, required or the name of one of the bot's tools", choice)
			return
		}
	}
	if l.ThinkingBudget > 0 {
		c.ps.add("/llm/tool_choice", "a tool_choice that forces a tool call cannot be combined with thinking_budget")
	}
}

func (c *checker) isTool(name string) bool {
	if slices.ContainsFunc(c.cfg.NativeTools, func(n NativeTool) bool { return n.Name == name }) {
		return true
	}
	for _, t := range c.tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func (c *checker) isMCPServer(name string) bool {
	for _, s := range c.cfg.MCPServers {
		if s.Name == name {
			return true
		}
	}
	return false
}

func (c *checker) runtime() {
	r := c.cfg.Runtime
	checkRange(&c.ps, "/runtime/max_turns", "max_turns", r.MaxTurns, 1, 100)
	checkRange(&c.ps, "/runtime/token_budget", "token_budget", r.TokenBudget, 1000, 10_000_000)
	checkRange(&c.ps, "/runtime/timeout_seconds", "timeout_seconds", r.TimeoutSeconds, 1, 3600)
	if cp := r.Compaction; cp != nil {
		if math.IsNaN(cp.ThresholdRatio) || cp.ThresholdRatio < 0 || cp.ThresholdRatio > 1 {
			c.ps.add("/runtime/compaction/threshold_ratio", "threshold_ratio must be more than 0 and at most 1 (a share of the context window), or left out for 0.8")
		}
		checkRange(&c.ps, "/runtime/compaction/keep_recent", "keep_recent", cp.KeepRecent, 1, 50)
		if len(cp.SummaryPrompt) > maxSummaryPrompt {
			c.ps.add("/runtime/compaction/summary_prompt", "summary_prompt must be at most %d bytes", maxSummaryPrompt)
		}
	}
}

// maxSummaryPrompt bounds runtime.compaction.summary_prompt.
const maxSummaryPrompt = 4000

// checkRange checks an optional integer setting: 0 means "use the default".
func checkRange(ps *Problems, at, name string, v, lo, hi int) {
	if v != 0 && (v < lo || v > hi) {
		ps.add(at, "%s must be between %d and %d (or left out for the default)", name, lo, hi)
	}
}

// checkRemoteURL checks a URL the platform connects to (an MCP server).
func checkRemoteURL(ps *Problems, at, raw string) {
	if strings.Contains(raw, "<") || strings.Contains(raw, "{{") {
		ps.add(at, "placeholders are not allowed in an MCP server URL; pass values in headers")
		return
	}
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		ps.add(at, "url is required for this transport; set the server's URL")
	case err != nil:
		ps.add(at, "URL is not valid: %v", err)
	case u.Scheme != "http" && u.Scheme != "https":
		ps.add(at, "URL scheme %q is not allowed; use https (or http)", u.Scheme)
	case u.Host == "":
		ps.add(at, "URL has no host")
	case u.User != nil:
		ps.add(at, "URL must not contain credentials; send them in a header with {{secrets.NAME}}")
	case !validPort(u.Port()):
		ps.add(at, "URL port %q is not a port; use a number from 1 to 65535, or none for the scheme's", u.Port())
	}
}

// validPort reports whether port (url.URL.Port's text) is empty or one a
// server can listen on. url.Parse checks only that it is digits, so 0 and
// 99999 would pass and fail at the first call.
func validPort(port string) bool {
	if port == "" {
		return true
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535
}
