package main

import (
	"fmt"
	"log/slog"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/anthropic"
	"github.com/parleyhq/parley/pkg/llm/openai"
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

// compileWith validates configs against the providers this server has, so
// a bot naming one it lacks is refused with a pointer when it is saved.
func compileWith(s Settings) func([]byte) (*botconfig.Bot, error) {
	opts := botconfig.Options{Providers: s.providerNames()}
	return func(data []byte) (*botconfig.Bot, error) {
		cfg, err := opts.Load(data)
		if err != nil {
			return nil, err
		}
		return botconfig.Compile(cfg)
	}
}
