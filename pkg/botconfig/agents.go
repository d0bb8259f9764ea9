package botconfig

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/parleyhq/parley/pkg/llm"
)

// AgentRef is another bot of the same tenant that the model may call as a
// tool: the call runs that bot's published version as a sub-run and its
// final answer is the tool's result.
type AgentRef struct {
	// Bot is the other bot's slug.
	Bot string `json:"bot"`
	// Name is the tool's name; default the slug with '-' as '_'.
	Name string `json:"name,omitempty"`
	// Description tells the model when to call it; default a sentence
	// naming the bot.
	Description string `json:"description,omitempty"`
}

// AgentSpec is one compiled agents entry.
type AgentSpec struct {
	Bot         string
	Name        string
	Description string
}

// Agent-call defaults and bounds.
const (
	DefaultMaxAgentDepth = 2
	maxAgentDepth        = 5
)

// AgentInputSchema is the parameters of every agent tool: one task text.
var AgentInputSchema = json.RawMessage(`{"type":"object","properties":{"input":{"type":"string","description":"The task or question for this agent, with every fact it needs: it does not see this conversation."}},"required":["input"]}`)

// botSlug is the platform's slug syntax (pkg/platform), repeated here so a
// config is checked without a tenant.
var botSlug = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// agents checks the agents entries and claims their tool names. Whether
// each slug names a bot of the tenant, and not the bot itself, is checked
// by the platform when a version is saved (AgentUses).
func (c *checker) agents() {
	seen := map[string]string{}
	for i, a := range c.cfg.Agents {
		at := ptr("/agents", i)
		if !botSlug.MatchString(a.Bot) {
			c.ps.add(ptr(at, "bot"), "bot %q is not a bot slug (lowercase letters, digits and '-')", a.Bot)
			continue
		}
		if prev, ok := seen[a.Bot]; ok {
			c.ps.add(ptr(at, "bot"), "bot %q is already an agent at %s; list each bot once", a.Bot, prev)
		}
		seen[a.Bot] = at
		name := agentToolName(a)
		if !llm.ValidToolName(name) {
			c.ps.add(ptr(at, "name"), "tool name %q must be 1-64 letters, digits, '_' or '-'", name)
			continue
		}
		c.claim(name, ptr(at, "name"))
	}
	checkRange(&c.ps, "/runtime/max_agent_depth", "max_agent_depth", c.cfg.Runtime.MaxAgentDepth, 1, maxAgentDepth)
}

func agentToolName(a AgentRef) string {
	if a.Name != "" {
		return a.Name
	}
	return strings.ReplaceAll(a.Bot, "-", "_")
}

func compileAgents(refs []AgentRef) []AgentSpec {
	var out []AgentSpec
	for _, a := range refs {
		desc := strings.TrimSpace(a.Description)
		if desc == "" {
			desc = "Hand a task to the " + a.Bot + " agent and get its answer."
		}
		out = append(out, AgentSpec{Bot: a.Bot, Name: agentToolName(a), Description: desc})
	}
	return out
}

// AgentUse is one bot slug the config's agents name.
type AgentUse struct {
	Bot     string
	Pointer string
}

// AgentUses lists the bots the agents entries name, in order, so the
// platform can check them against the tenant's bots.
func (b *Bot) AgentUses() []AgentUse {
	uses := make([]AgentUse, len(b.Agents))
	for i, a := range b.Agents {
		uses[i] = AgentUse{Bot: a.Bot, Pointer: ptr(ptr("/agents", i), "bot")}
	}
	return uses
}
