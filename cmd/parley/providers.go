package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/anthropic"
	"github.com/parleyhq/parley/pkg/llm/openai"
	"github.com/parleyhq/parley/pkg/platform"
)

// openProviders builds the server's model providers from the settings: the
// default one (PARLEY_LLM_*), named by its kind, and the anthropic one when
// PARLEY_ANTHROPIC_API_KEY is set. Bots name them in llm.provider and
// llm.fallbacks.
func openProviders(s Settings, log *slog.Logger) (llm.Provider, dialog.Providers, error) {
	var def llm.Provider
	var err error
	switch s.LLMProvider {
	case "anthropic":
		def, err = anthropic.New(anthropic.Config{BaseURL: s.LLMBaseURL, APIKey: s.LLMAPIKey})
	default:
		def, err = openai.New(openai.Config{BaseURL: s.LLMBaseURL, APIKey: s.LLMAPIKey, Logger: log})
	}
	if err != nil {
		return nil, nil, fmt.Errorf("LLM provider (PARLEY_LLM_BASE_URL): %w", err)
	}
	named := dialog.Providers{def.Name(): def}
	if s.AnthropicAPIKey != "" && s.LLMProvider != "anthropic" {
		p, err := anthropic.New(anthropic.Config{BaseURL: s.AnthropicBaseURL, APIKey: s.AnthropicAPIKey})
		if err != nil {
			return nil, nil, fmt.Errorf("anthropic provider (PARLEY_ANTHROPIC_BASE_URL): %w", err)
		}
		named[p.Name()] = p
	}
	return def, named, nil
}

// providerNames are the names openProviders gives its providers, known from
// the settings alone.
func (s Settings) providerNames() []string {
	names := []string{s.LLMProvider}
	if s.AnthropicAPIKey != "" && s.LLMProvider != "anthropic" {
		names = append(names, "anthropic")
	}
	return names
}

// serverModels are the model lists of the server's providers
// (platform.Options.ServerModels), against which saved configs are
// warned: a provider at a vendor's public API serves the catalog's models
// of that vendor; one anywhere else (a gateway, Ollama, vLLM, Azure) has
// no list and is not checked, so nothing is warned about it.
func (s Settings) serverModels(catalog *llm.Catalog) map[string][]string {
	out := map[string][]string{}
	if list := catalog.ModelsOf(vendorAt(s.LLMBaseURL)); len(list) > 0 {
		out[""], out[s.LLMProvider] = list, list
	}
	if s.AnthropicAPIKey != "" && s.LLMProvider != "anthropic" {
		if list := catalog.ModelsOf(vendorAt(s.AnthropicBaseURL)); len(list) > 0 {
			out["anthropic"] = list
		}
	}
	return out
}

// vendorAt names the catalog vendor (llm.ModelInfo.Provider) whose public
// API baseURL is; "" for any other URL.
func vendorAt(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err != nil {
		return ""
	}
	switch strings.ToLower(u.Hostname()) {
	case "api.openai.com":
		return "openai"
	case "api.anthropic.com":
		return "anthropic"
	case "api.deepseek.com":
		return "deepseek"
	}
	return ""
}

// newTenantProvider builds a tenant's own provider (PUT /providers) for a
// run, sending through client, the outbound-policy client.
func newTenantProvider(p platform.TenantProvider, client *http.Client) (llm.Provider, error) {
	switch p.Kind {
	case platform.ProviderAnthropic:
		return anthropic.New(anthropic.Config{Name: p.Name, BaseURL: p.BaseURL, APIKey: p.APIKey, Headers: p.Headers, HTTPClient: client})
	default:
		return openai.New(openai.Config{Name: p.Name, BaseURL: p.BaseURL, APIKey: p.APIKey, Headers: p.Headers, HTTPClient: client})
	}
}
