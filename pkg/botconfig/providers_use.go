package botconfig

import (
	"fmt"
	"slices"
	"strings"

	"github.com/parleyhq/parley/pkg/llm"
)

// ProviderUse is one place a config names a model provider.
type ProviderUse struct {
	Name    string
	Pointer string
}

// ProviderUses lists the providers the bot's llm section names (llm.provider,
// llm.fallbacks[].provider and llm.quota_downgrade.provider), in order; the server's default provider,
// named by "", is left out. The platform checks them against the providers
// the server and the tenant have.
func (b *Bot) ProviderUses() []ProviderUse {
	var uses []ProviderUse
	if b.LLM.Provider != "" {
		uses = append(uses, ProviderUse{Name: b.LLM.Provider, Pointer: "/llm/provider"})
	}
	for i, f := range b.LLM.Fallbacks {
		if f.Provider != "" {
			uses = append(uses, ProviderUse{Name: f.Provider, Pointer: fmt.Sprintf("/llm/fallbacks/%d/provider", i)})
		}
	}
	if d := b.LLM.QuotaDowngrade; d != nil && d.Provider != "" {
		uses = append(uses, ProviderUse{Name: d.Provider, Pointer: "/llm/quota_downgrade/provider"})
	}
	if m := b.Guardrails.Moderation; m != nil && m.Provider != "" {
		uses = append(uses, ProviderUse{Name: m.Provider, Pointer: "/guardrails/moderation/provider"})
	}
	return uses
}

// Downgraded returns the bot as it answers once its tenant nears its daily
// quota: the quota_downgrade provider and model first, then its usual
// fallbacks. Without a quota_downgrade it returns b.
func (b *Bot) Downgraded() *Bot {
	d := b.LLM.QuotaDowngrade
	if d == nil {
		return b
	}
	out := *b
	out.LLM.Provider, out.LLM.Model, out.LLM.FallbackModels = d.Provider, d.Model, nil
	return &out
}

// ModelUse is one place a config names a model of a provider.
type ModelUse struct {
	Provider, Model, Pointer string
}

// ModelUses lists the models the bot's llm section asks of a provider:
// llm.model and llm.fallback_models of llm.provider, each fallback's and
// the quota downgrade's. The server's default provider is named by "";
// empty models (the provider's default) are left out.
func (b *Bot) ModelUses() []ModelUse {
	var uses []ModelUse
	add := func(provider, model, pointer string) {
		if model != "" {
			uses = append(uses, ModelUse{Provider: provider, Model: model, Pointer: pointer})
		}
	}
	add(b.LLM.Provider, b.LLM.Model, "/llm/model")
	for i, m := range b.LLM.FallbackModels {
		add(b.LLM.Provider, m, fmt.Sprintf("/llm/fallback_models/%d", i))
	}
	for i, f := range b.LLM.Fallbacks {
		add(f.Provider, f.Model, fmt.Sprintf("/llm/fallbacks/%d/model", i))
	}
	if d := b.LLM.QuotaDowngrade; d != nil {
		add(d.Provider, d.Model, "/llm/quota_downgrade/model")
	}
	return uses
}

// maxListedModels is how many of a provider's models a warning names.
const maxListedModels = 12

// UnknownModels warns, with a pointer each, where the bot asks a provider
// for a model its list does not have. models maps provider names to the
// models they serve ("" to the server's default provider's); a provider
// without a list is not checked. A dated or tagged variant of a listed
// model counts as listed (llm.ModelIn). These are warnings, not errors: a
// provider may serve models its list omits.
func (b *Bot) UnknownModels(models map[string][]string) Problems {
	var ps Problems
	for _, u := range b.ModelUses() {
		list := models[u.Provider]
		if len(list) == 0 || llm.ModelIn(list, u.Model) {
			continue
		}
		who := fmt.Sprintf("provider %q's", u.Provider)
		if u.Provider == "" {
			who = "the default provider's"
		}
		named := list
		if len(named) > maxListedModels {
			named = append(slices.Clip(named[:maxListedModels]), "...")
		}
		ps = append(ps, Problem{Pointer: u.Pointer,
			Message: fmt.Sprintf("model %q is not among %s models (%s)", u.Model, who, strings.Join(named, ", "))})
	}
	return ps
}
