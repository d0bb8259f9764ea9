package dialog

import (
	"context"
	"fmt"
	"sort"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/llm"
)

// BotResolver picks the bot's provider and model (the server's default
// provider p, and defaultModel, when its config names none), then after a
// retryable failure its fallback models on that provider, then its
// fallbacks, each a provider and model, in order. Every choice carries the
// context window the catalog gives its model. named holds the providers a
// config may name; a fallback naming one that is not there is skipped.
func BotResolver(p llm.Provider, named Providers, catalog *llm.Catalog, defaultModel string, bot *botconfig.Bot) agent.ProviderResolver {
	model := bot.LLM.Model
	if model == "" {
		model = defaultModel
	}
	primary, ok := named.get(p, bot.LLM.Provider)
	if !ok {
		return agent.ResolverFunc(func(context.Context, agent.ResolveInfo) (agent.Choice, error) {
			return agent.Choice{}, fmt.Errorf("the bot names provider %q, which this server does not have", bot.LLM.Provider)
		})
	}
	window := func(m string) int { return catalog.Info(m).ContextWindow }
	choices := []agent.Choice{{Provider: primary, Model: model, ContextWindow: window(model)}}
	for _, m := range bot.LLM.FallbackModels {
		choices = append(choices, agent.Choice{Provider: primary, Model: m, ContextWindow: window(m)})
	}
	for _, f := range bot.LLM.Fallbacks {
		if fp, ok := named.get(p, f.Provider); ok {
			choices = append(choices, agent.Choice{Provider: fp, Model: f.Model, ContextWindow: window(f.Model)})
		}
	}
	return agent.ResolverFunc(func(_ context.Context, info agent.ResolveInfo) (agent.Choice, error) {
		if info.Attempt >= len(choices) {
			return agent.Choice{}, agent.ErrNoFallback
		}
		return choices[info.Attempt], nil
	})
}

// Providers are the model providers a bot's llm section may name, by name.
type Providers map[string]llm.Provider

// get returns the provider called name, or def for "".
func (ps Providers) get(def llm.Provider, name string) (llm.Provider, bool) {
	if name == "" {
		return def, def != nil
	}
	p, ok := ps[name]
	return p, ok
}

// Names lists the providers' names, sorted, for validation messages.
func (ps Providers) Names() []string {
	names := make([]string, 0, len(ps))
	for n := range ps {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
