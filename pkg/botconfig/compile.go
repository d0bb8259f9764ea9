package botconfig

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// Runtime defaults, applied by Compile when the config leaves a setting out.
const (
	DefaultMaxTurns          = 8
	DefaultTokenBudget       = 60000
	DefaultTimeout           = 120 * time.Second
	DefaultParallelToolCalls = true
	DefaultMCPTimeout        = 30 * time.Second
	// DefaultCompactionThreshold is the share of the context window at which
	// older messages are summarised, as in the seed.
	DefaultCompactionThreshold  = 0.8
	DefaultCompactionKeepRecent = 6
)

// Compile validates cfg with the default options and compiles it: see
// Options.Compile.
func Compile(cfg *Config) (*Bot, error) { return Options{}.Compile(cfg) }

// Compile turns a config into a Bot: the system prompt, tool specs with parsed
// endpoint templates, runtime limits with defaults applied, and a fingerprint.
// It is pure and deterministic: the same config always gives the same Bot.
// An invalid config returns its Problems. The Bot shares no memory with cfg.
func (o Options) Compile(cfg *Config) (*Bot, error) {
	if cfg == nil {
		return nil, Problems{{"", "config is missing"}}
	}
	tools, ps := o.check(cfg)
	if len(ps) > 0 {
		return nil, ps.sorted()
	}
	b := &Bot{
		Name:             cfg.BasicSettings.Name,
		ChatbotID:        cfg.BasicSettings.ChatbotID,
		Greeting:         cfg.BasicSettings.Greeting,
		Description:      cfg.BasicSettings.Description,
		Tools:            tools,
		NativeTools:      nativeNames(cfg.NativeTools),
		ContextVariables: slices.Clone(cfg.ContextVariables),
		Agents:           compileAgents(cfg.Agents),
		Skills:           compileSkills(cfg.Skills),
		LLM:              compileLLM(cfg.LLM),
		Runtime:          compileRuntime(cfg.Runtime),
		Memory:           compileMemory(cfg.Memory),
		Knowledge:        compileKnowledge(cfg.Knowledge),
		Guardrails:       compileGuardrails(cfg.Guardrails),
		Fingerprint:      Fingerprint(cfg),
	}
	b.MCPServers, b.mcpIndex = compileMCPServers(cfg.MCPServers)
	if cfg.BasicSettings.IncludeDate {
		b.dateIn, _ = dateLocation(cfg.BasicSettings.Timezone) // validated by check
	}
	for _, nt := range cfg.NativeTools {
		if nt.Ephemeral > 0 {
			if b.NativeKeepLast == nil {
				b.NativeKeepLast = map[string]int{}
			}
			b.NativeKeepLast[nt.Name] = nt.Ephemeral
		}
	}
	for i := range b.Tools {
		b.Tools[i].Parameters = bytes.Clone(b.Tools[i].Parameters)
	}
	b.SystemPrompt = systemPrompt(cfg)
	return b, nil
}

func compileRuntime(r RuntimeSettings) Runtime {
	out := Runtime{
		MaxTurns:          r.MaxTurns,
		TokenBudget:       r.TokenBudget,
		Timeout:           time.Duration(r.TimeoutSeconds) * time.Second,
		ParallelToolCalls: DefaultParallelToolCalls,
		RequireDoneTool:   r.RequireDoneTool,
		MaxAgentDepth:     r.MaxAgentDepth,
	}
	if out.MaxAgentDepth == 0 {
		out.MaxAgentDepth = DefaultMaxAgentDepth
	}
	if out.MaxTurns == 0 {
		out.MaxTurns = DefaultMaxTurns
	}
	if out.TokenBudget == 0 {
		out.TokenBudget = DefaultTokenBudget
	}
	if out.Timeout == 0 {
		out.Timeout = DefaultTimeout
	}
	if r.ParallelToolCalls != nil {
		out.ParallelToolCalls = *r.ParallelToolCalls
	}
	out.TerminationSummary = r.TerminationSummary == nil || *r.TerminationSummary
	out.Compaction = Compaction{Enabled: true, ThresholdRatio: DefaultCompactionThreshold, KeepRecent: DefaultCompactionKeepRecent}
	if c := r.Compaction; c != nil {
		out.Compaction.Enabled = c.Enabled == nil || *c.Enabled
		out.Compaction.SummaryPrompt = c.SummaryPrompt
		if c.ThresholdRatio > 0 {
			out.Compaction.ThresholdRatio = c.ThresholdRatio
		}
		if c.KeepRecent > 0 {
			out.Compaction.KeepRecent = c.KeepRecent
		}
	}
	return out
}

func compileLLM(l LLMSettings) LLMSettings {
	out := l
	if l.Temperature != nil {
		t := *l.Temperature
		out.Temperature = &t
	}
	out.FallbackModels = slices.Clone(l.FallbackModels)
	out.Fallbacks = slices.Clone(l.Fallbacks)
	if l.QuotaDowngrade != nil {
		d := *l.QuotaDowngrade
		out.QuotaDowngrade = &d
	}
	if l.Images != nil {
		v := *l.Images
		out.Images = &v
	}
	return out
}

// compileMCPServers copies the enabled servers with the default timeout
// applied, and returns the index each has in the config, for pointers.
func compileMCPServers(servers []MCPServer) ([]MCPServer, []int) {
	var out []MCPServer
	var index []int
	for i, s := range servers {
		if !s.IsEnabled() {
			continue
		}
		s.Headers = maps.Clone(s.Headers)
		s.Env = maps.Clone(s.Env)
		s.Args = slices.Clone(s.Args)
		s.Tools = MCPToolFilter{Allow: slices.Clone(s.Tools.Allow), Deny: slices.Clone(s.Tools.Deny)}
		s.Enabled = nil
		if s.Timeout == 0 {
			s.Timeout = DefaultMCPTimeout.Seconds()
		}
		out = append(out, s)
		index = append(index, i)
	}
	return out, index
}

// Fingerprint is the hex SHA-256 of the config's canonical encoding: JSON with
// object keys sorted, no insignificant whitespace and numbers as written. Two
// configs that differ only in formatting or key order share a fingerprint.
func Fingerprint(cfg *Config) string {
	h := sha256.New()
	h.Write([]byte("parley.agent-config.v1\n"))
	h.Write(canonicalJSON(cfg))
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalJSON re-encodes cfg through a generic value: encoding/json sorts
// map keys, which also normalises the embedded raw parameters and bodies.
func canonicalJSON(cfg *Config) []byte {
	c := *cfg
	c.Schema = "" // editor help only; moving a file must not change its version
	raw, err := json.Marshal(&c)
	if err != nil {
		// Only invalid raw JSON in Parameters or Body can fail here; hash
		// the Go representation instead so Fingerprint stays total.
		raw = []byte(err.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}
