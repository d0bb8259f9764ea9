package botrun

import (
	"context"
	"time"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool"
)

// toolTimeoutMargin lets a tool's own timeout (at most
// botconfig.MaxEndpointTimeout) fire first, with its clearer message, before
// the loop's backstop does.
const toolTimeoutMargin = 5 * time.Second

// Config maps a compiled bot onto the loop's settings for one dialog: its
// prompt with the dialog's facts, model options, limits and tools. Hooks,
// Sink and Now are the caller's.
func Config(bot *botconfig.Bot, vars botconfig.Vars, resolver agent.ProviderResolver, tools *tool.Set) agent.Config {
	cfg := agent.Config{
		Resolver:           resolver,
		Tools:              tools,
		System:             bot.Prompt(vars),
		Temperature:        bot.LLM.Temperature,
		MaxTokens:          bot.LLM.MaxTokens,
		ToolChoice:         bot.LLM.ToolChoice,
		ThinkingBudget:     bot.LLM.ThinkingBudget,
		ParallelToolCalls:  bot.Runtime.ParallelToolCalls,
		RequireDoneTool:    bot.Runtime.RequireDoneTool,
		StrictTools:        bot.LLM.StrictTools,
		TerminationSummary: bot.Runtime.TerminationSummary,
		Skills:             loopSkills(bot.Skills, tools),
		Context: agent.ContextPolicy{
			CompactAt:        bot.Runtime.Compaction.ThresholdRatio,
			KeepRecent:       bot.Runtime.Compaction.KeepRecent,
			CompactionPrompt: bot.Runtime.Compaction.SummaryPrompt,
			NoCompaction:     !bot.Runtime.Compaction.Enabled,
		},
		Limits: agent.Limits{
			MaxTurns:    bot.Runtime.MaxTurns,
			TokenBudget: bot.Runtime.TokenBudget,
			Timeout:     bot.Runtime.Timeout,
			ToolTimeout: botconfig.MaxEndpointTimeout + toolTimeoutMargin,
		},
	}
	if !bot.Guardrails.Topics.Empty() || bot.Guardrails.MaxMessageChars > 0 {
		cfg.Guard = screen{bot.Guardrails}
	}
	return cfg
}

// screen is the part of a bot's guardrails that needs neither a database
// nor a moderation provider (blocked topics, the length limit), so
// `parley chat` and conversation tests refuse as the server does. The
// dialog runtime replaces it with its own guard, which also moderates.
type screen struct{ g botconfig.Guardrails }

// Screen implements agent.Guard.
func (s screen) Screen(_ context.Context, where, text string) (*agent.Verdict, error) {
	rule := s.g.Rule(where, text)
	if rule == "" {
		return nil, nil
	}
	return &agent.Verdict{Rule: rule, Where: where, Reply: s.g.Reply}, nil
}
