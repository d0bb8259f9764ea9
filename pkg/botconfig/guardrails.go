package botconfig

import (
	"regexp"
	"slices"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/guardrail"
	"github.com/parleyhq/parley/pkg/pii"
)

// Where personal data is masked (guardrails.pii.in).
const (
	PIIInTranscript = "transcript" // stored messages and tool calls, and so exports
	PIIInWebhooks   = "webhooks"   // webhook payloads
	PIIInLogs       = "logs"       // the server's log lines about the dialog
	PIIInModel      = "model"      // what the model provider receives
)

// Guardrail limits.
const (
	MaxPIIPatterns     = 20
	MaxBlockedTopics   = 200
	MaxGuardrailReply  = 2000
	MaxMessageCharsCap = 100000
)

// GuardrailSettings is the config's guardrails section: personal data
// masking, blocked topics, a message length limit, a moderation provider,
// and what happens when one of them fires. docs/guardrails.md says more.
type GuardrailSettings struct {
	PII           *PIISettings `json:"pii,omitempty"`
	BlockedTopics []string     `json:"blocked_topics,omitempty"`
	// MaxMessageChars refuses longer user messages; 0 is no limit beyond
	// the server's own.
	MaxMessageChars int                 `json:"max_message_chars,omitempty"`
	Moderation      *ModerationSettings `json:"moderation,omitempty"`
	// Action is what a rule fired on the input or the output does:
	// "refuse" (default), "handoff" or "end".
	Action string `json:"action,omitempty"`
	// Reply is the bot's answer when it refuses or ends; a default one
	// when left out.
	Reply string `json:"reply,omitempty"`
	// ToolInjection is what a tool output that looks like a prompt
	// injection does: "flag" (default: logged in the dialog, passed on),
	// "block" (the model gets a note instead) or "off".
	ToolInjection string `json:"tool_injection,omitempty"`
}

// PIISettings says which personal data is masked, and where.
type PIISettings struct {
	// Redact lists the built-in kinds: "email", "phone", "card", "iban".
	Redact []string `json:"redact,omitempty"`
	// Patterns are the tenant's own kinds, each an RE2 regular expression.
	Patterns []PIIPattern `json:"patterns,omitempty"`
	// In lists where: "transcript", "webhooks", "logs", "model".
	In []string `json:"in"`
}

// PIIPattern is a tenant-defined kind of personal data.
type PIIPattern struct {
	Name  string `json:"name"`
	Regex string `json:"regex"`
}

// ModerationSettings names an OpenAI-compatible moderation endpoint
// (POST /v1/moderations) that screens the texts of a dialog.
type ModerationSettings struct {
	// Provider names one of the tenant's providers, or "" for the
	// server's default.
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// On lists what is screened: "input", "output"; default both.
	On []string `json:"on,omitempty"`
}

// DefaultGuardrailReply is the answer of a bot whose config gives none.
const DefaultGuardrailReply = "Sorry, I can't help with that."

// Guardrails is GuardrailSettings compiled; the zero value guards nothing.
type Guardrails struct {
	// PII finds the personal data to mask; nil masks nothing.
	PII *pii.Detector
	// PIIIn is where it is masked.
	PIIIn           map[string]bool
	Topics          guardrail.Topics
	MaxMessageChars int
	Moderation      *Moderation
	Action          string
	Reply           string
	ToolInjection   string
}

// Moderation is ModerationSettings compiled.
type Moderation struct {
	Provider, Model string
	Input, Output   bool
}

// MasksText says the dialog's texts are kept with placeholders (the
// transcript and the model share them: the model reads the dialog back
// from its stored messages).
func (g Guardrails) MasksText() bool {
	return g.PII != nil && (g.PIIIn[PIIInTranscript] || g.PIIIn[PIIInModel])
}

// Masks says personal data is masked in where.
func (g Guardrails) Masks(where string) bool { return g.PII != nil && g.PIIIn[where] }

// Screens says some rule screens the dialog's texts.
func (g Guardrails) Screens() bool {
	return !g.Topics.Empty() || g.MaxMessageChars > 0 || g.Moderation != nil
}

// Rule is the rule that text, said where ("input" or "output"), breaks
// among those that need no model: the length limit (input only), then
// the blocked topics; "" when none.
func (g Guardrails) Rule(where, text string) string {
	if where == guardrail.WhereInput && g.MaxMessageChars > 0 && utf8.RuneCountInString(text) > g.MaxMessageChars {
		return guardrail.RuleMaxLength
	}
	if _, ok := g.Topics.Match(text); ok {
		return guardrail.RuleBlockedTopic
	}
	return ""
}

func compileGuardrails(s *GuardrailSettings) Guardrails {
	if s == nil {
		return Guardrails{ToolInjection: "flag"}
	}
	g := Guardrails{
		Topics:          guardrail.NewTopics(s.BlockedTopics),
		MaxMessageChars: s.MaxMessageChars,
		Action:          s.Action,
		Reply:           s.Reply,
		ToolInjection:   s.ToolInjection,
	}
	if g.Action == "" {
		g.Action = guardrail.ActionRefuse
	}
	if g.Reply == "" {
		g.Reply = DefaultGuardrailReply
	}
	if g.ToolInjection == "" {
		g.ToolInjection = "flag"
	}
	if p := s.PII; p != nil {
		patterns := make([]pii.Pattern, 0, len(p.Patterns))
		for _, pp := range p.Patterns {
			compiled, _ := pii.CompilePattern(pp.Name, pp.Regex) // validated by check
			patterns = append(patterns, compiled)
		}
		g.PII, _ = pii.New(p.Redact, patterns)
		g.PIIIn = map[string]bool{}
		for _, in := range p.In {
			g.PIIIn[in] = true
		}
	}
	if m := s.Moderation; m != nil {
		g.Moderation = &Moderation{Provider: m.Provider, Model: m.Model,
			Input:  len(m.On) == 0 || slices.Contains(m.On, guardrail.WhereInput),
			Output: len(m.On) == 0 || slices.Contains(m.On, guardrail.WhereOutput)}
	}
	return g
}

var patternNameRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

func (c *checker) guardrails() {
	g := c.cfg.Guardrails
	if g == nil {
		return
	}
	if p := g.PII; p != nil {
		for i, kind := range p.Redact {
			if !slices.Contains(pii.Kinds, kind) {
				c.ps.add(ptr("/guardrails/pii/redact", i), "unknown kind %q; use email, phone, card or iban, or a pattern", kind)
			}
		}
		for i, in := range p.In {
			if !slices.Contains([]string{PIIInTranscript, PIIInWebhooks, PIIInLogs, PIIInModel}, in) {
				c.ps.add(ptr("/guardrails/pii/in", i), "unknown place %q; use transcript, webhooks, logs or model", in)
			}
		}
		if len(p.Patterns) > MaxPIIPatterns {
			c.ps.add("/guardrails/pii/patterns", "at most %d patterns", MaxPIIPatterns)
		}
		seen := map[string]bool{}
		for i, pp := range p.Patterns {
			at := ptr("/guardrails/pii/patterns", i)
			switch {
			case !patternNameRe.MatchString(pp.Name):
				c.ps.add(at+"/name", "a pattern's name is 1 to 32 lower-case letters, digits and '_', starting with a letter")
			case slices.Contains(pii.Kinds, pp.Name) || seen[pp.Name]:
				c.ps.add(at+"/name", "name %q is taken; give each pattern its own name, not a built-in kind's", pp.Name)
			}
			seen[pp.Name] = true
			if _, err := pii.CompilePattern(pp.Name, pp.Regex); err != nil {
				c.ps.add(at+"/regex", "not a usable RE2 regular expression: %v", err)
			}
		}
		if len(p.Redact) == 0 && len(p.Patterns) == 0 {
			c.ps.add("/guardrails/pii/redact", "name at least one kind to mask, or add a pattern")
		}
	}
	if len(g.BlockedTopics) > MaxBlockedTopics {
		c.ps.add("/guardrails/blocked_topics", "at most %d topics", MaxBlockedTopics)
	}
	for i, topic := range g.BlockedTopics {
		if len(guardrail.Words(topic)) == 0 {
			c.ps.add(ptr("/guardrails/blocked_topics", i), "a topic needs at least one word")
		}
	}
	checkRange(&c.ps, "/guardrails/max_message_chars", "max_message_chars", g.MaxMessageChars, 1, MaxMessageCharsCap)
	if g.Action != "" && !slices.Contains([]string{guardrail.ActionRefuse, guardrail.ActionHandoff, guardrail.ActionEnd}, g.Action) {
		c.ps.add("/guardrails/action", "action must be refuse, handoff or end")
	}
	if len(g.Reply) > MaxGuardrailReply {
		c.ps.add("/guardrails/reply", "at most %d bytes", MaxGuardrailReply)
	}
	if g.ToolInjection != "" && !slices.Contains([]string{"flag", "block", "off"}, g.ToolInjection) {
		c.ps.add("/guardrails/tool_injection", "tool_injection must be flag, block or off")
	}
	if m := g.Moderation; m != nil {
		for i, on := range m.On {
			if on != guardrail.WhereInput && on != guardrail.WhereOutput {
				c.ps.add(ptr("/guardrails/moderation/on", i), "unknown %q; use input or output", on)
			}
		}
	}
}
