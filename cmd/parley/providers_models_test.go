package main

import (
	"slices"
	"testing"

	"github.com/parleyhq/parley/configs"
	"github.com/parleyhq/parley/pkg/llm"
)

func TestServerModelsListOnlyProvidersAtAPublicAPI(t *testing.T) {
	t.Parallel()
	catalog, err := llm.LoadCatalog(configs.Models())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		env     parleyEnv
		listed  map[string]string // provider -> a model its list must have
		missing []string          // providers without a list
	}{
		{"the default settings are OpenAI's public API", parleyEnv{},
			map[string]string{"": "gpt-4o-mini", "openai": "gpt-4o"}, []string{"anthropic"}},
		{"a private OpenAI-compatible server has no list", parleyEnv{"PARLEY_LLM_BASE_URL": "http://127.0.0.1:11434/v1"},
			nil, []string{"", "openai"}},
		{"the anthropic provider at its public API lists Claude", parleyEnv{"PARLEY_LLM_BASE_URL": "http://vllm.internal/v1", "PARLEY_ANTHROPIC_API_KEY": "k"},
			map[string]string{"anthropic": "claude-sonnet-4-5"}, []string{"", "openai"}},
		{"DeepSeek's API lists DeepSeek's models", parleyEnv{"PARLEY_LLM_BASE_URL": "https://api.deepseek.com/v1"},
			map[string]string{"": "deepseek-chat"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LoadSettings(tt.env.getenv)
			if err != nil {
				t.Fatal(err)
			}
			got := s.serverModels(catalog)
			for p, m := range tt.listed {
				if !slices.Contains(got[p], m) {
					t.Errorf("models[%q] = %v, want it to have %s", p, got[p], m)
				}
			}
			for _, p := range tt.missing {
				if list, ok := got[p]; ok {
					t.Errorf("models[%q] = %v, want no list", p, list)
				}
			}
		})
	}
}
