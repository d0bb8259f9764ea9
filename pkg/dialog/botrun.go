package dialog

import (
	"time"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/tool"
)

// toolTimeoutMargin lets a tool's own timeout (at most
// botconfig.MaxEndpointTimeout) fire first, with its clearer message, before
// the loop's backstop does.
const toolTimeoutMargin = 5 * time.Second

// AgentConfig maps a compiled bot onto the loop's settings for one dialog:
// its prompt with the dialog's facts, model options, limits and tools. The
// server and `parley chat` both use it, so a bot runs the same in both.
// Hooks, Sink and Now are the caller's.
func AgentConfig(bot *botconfig.Bot, vars botconfig.Vars, resolver agent.ProviderResolver, tools *tool.Set) agent.Config {
	return agent.Config{
		Resolver:           resolver,
		Tools:              tools,
		System:             bot.Prompt(vars),
		Temperature:        bot.LLM.Temperature,
		MaxTokens:          bot.LLM.MaxTokens,
		ParallelToolCalls:  bot.Runtime.ParallelToolCalls,
		RequireDoneTool:    bot.Runtime.RequireDoneTool,
		StrictTools:        bot.LLM.StrictTools,
		TerminationSummary: bot.Runtime.TerminationSummary,
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
}

// BotResolver picks the bot's model (or defaultModel when its config names
// none), then its fallback models after retryable failures, each with the
// context window the catalog gives it.
func BotResolver(p llm.Provider, catalog *llm.Catalog, defaultModel string, bot *botconfig.Bot) agent.ProviderResolver {
	model := bot.LLM.Model
	if model == "" {
		model = defaultModel
	}
	window := func(m string) int { return catalog.Info(m).ContextWindow }
	return agent.Fallback(p, window, append([]string{model}, bot.LLM.FallbackModels...)...)
}
