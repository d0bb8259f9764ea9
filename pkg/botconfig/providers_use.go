package botconfig

import "fmt"

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
