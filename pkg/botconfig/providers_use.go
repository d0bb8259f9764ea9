package botconfig

import "fmt"

// ProviderUse is one place a config names a model provider.
type ProviderUse struct {
	Name    string
	Pointer string
}

// ProviderUses lists the providers the bot's llm section names (llm.provider
// and llm.fallbacks[].provider), in order; the server's default provider,
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
	return uses
}
