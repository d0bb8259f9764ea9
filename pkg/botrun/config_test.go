package botrun_test

import (
	"testing"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/botrun"
)

func TestConfigCarriesTheBotsLimitsAndLetsToolsUseTheirWholeTimeout(t *testing.T) {
	cfg, err := botconfig.Load([]byte(`{"basic_settings": {"name": "Limits"},
	  "context_variables": [{"name": "tier", "expose_to_llm": true}],
	  "runtime": {"max_turns": 3, "token_budget": 5000, "timeout_seconds": 200, "parallel_tool_calls": false}}`))
	if err != nil {
		t.Fatal(err)
	}
	bot, err := botconfig.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := botrun.Config(bot, botconfig.Vars{"tier": "gold"}, nil, nil)
	if got.Limits.MaxTurns != 3 || got.Limits.TokenBudget != 5000 || got.Limits.Timeout != bot.Runtime.Timeout || got.ParallelToolCalls {
		t.Errorf("limits = %+v, parallel %v; want the config's", got.Limits, got.ParallelToolCalls)
	}
	// An endpoint may take up to MaxEndpointTimeout; the loop's backstop
	// must not cut it shorter.
	if got.Limits.ToolTimeout <= botconfig.MaxEndpointTimeout {
		t.Errorf("tool timeout %v would cut a %v endpoint short", got.Limits.ToolTimeout, botconfig.MaxEndpointTimeout)
	}
	if got.System != bot.Prompt(botconfig.Vars{"tier": "gold"}) {
		t.Error("the system prompt lacks the dialog's facts")
	}
}
