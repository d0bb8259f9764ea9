package llm_test

import (
	"math"
	"strings"
	"testing"

	"github.com/parleyhq/parley/configs"
	"github.com/parleyhq/parley/pkg/llm"
)

func mustLoadCatalog(t *testing.T) *llm.Catalog {
	t.Helper()
	c, err := llm.LoadCatalog(configs.Models())
	if err != nil {
		t.Fatalf("LoadCatalog(configs.Models()): %v", err)
	}
	return c
}

func TestCatalogLookup(t *testing.T) {
	c := mustLoadCatalog(t)
	tests := []struct {
		name  string
		model string
		want  string // catalog entry name; "" means not found
	}{
		{"an exact name is found", "gpt-4o", "gpt-4o"},
		{"names are case-insensitive", "GPT-4o-Mini", "gpt-4o-mini"},
		{"a dated variant resolves to the longest known family", "gpt-4o-mini-2024-07-18", "gpt-4o-mini"},
		{"a dated gpt-4o resolves to gpt-4o, not gpt-4", "gpt-4o-2024-08-06", "gpt-4o"},
		{"gpt-4.1 variants do not fall back to gpt-4", "gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"},
		{"an ollama tag resolves to its family", "llama3.1:8b", "llama3.1"},
		{"a vendor prefix is ignored", "openai/gpt-4.1-nano", "gpt-4.1-nano"},
		{"a name that merely shares letters is unknown", "gpt-4omega", ""},
		{"an unknown model is not found", "my-finetune", ""},
		{"an empty name is not found", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := c.Lookup(tt.model)
			if ok != (tt.want != "") || got.Name != tt.want {
				t.Fatalf("Lookup(%q) = %q, %v; want %q", tt.model, got.Name, ok, tt.want)
			}
		})
	}
}

func TestCatalogInfoFallsBackToAConservativeDefault(t *testing.T) {
	c := mustLoadCatalog(t)
	got := c.Info("some-local-model")
	if got.Name != "some-local-model" || got.ContextWindow != 8192 || got.MaxOutput <= 0 {
		t.Fatalf("Info(unknown) = %+v; want the 8k default named after the model", got)
	}
	if c.Cost("some-local-model", llm.Usage{InputTokens: 1e6, OutputTokens: 1e6}) != 0 {
		t.Fatalf("unknown models should cost the default price, zero")
	}
}

func TestCatalogCost(t *testing.T) {
	c := mustLoadCatalog(t)
	tests := []struct {
		name  string
		model string
		usage llm.Usage
		want  float64
	}{
		{"a million input tokens cost the input price", "gpt-4o", llm.Usage{InputTokens: 1_000_000}, 2.50},
		{"output tokens cost the output price", "gpt-4o-mini", llm.Usage{OutputTokens: 2_000_000}, 1.20},
		{"a dated variant is priced like its family", "gpt-4o-mini-2024-07-18", llm.Usage{InputTokens: 1000, OutputTokens: 500}, 0.00045},
		{"no usage costs nothing", "gpt-4.1", llm.Usage{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.Cost(tt.model, tt.usage); math.Abs(got-tt.want) > 1e-12 {
				t.Fatalf("Cost(%q, %+v) = %v; want %v", tt.model, tt.usage, got, tt.want)
			}
		})
	}
}

func TestShippedCatalogListsTheModelsTheBotsUse(t *testing.T) {
	c := mustLoadCatalog(t)
	for _, name := range []string{"gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "o3-mini", "deepseek-chat"} {
		m, ok := c.Lookup(name)
		if !ok || m.InputPerMTok <= 0 || m.OutputPerMTok <= 0 {
			t.Errorf("%s: got %+v, %v; want a priced entry", name, m, ok)
		}
	}
	if len(c.Models()) < 10 {
		t.Errorf("Models() lists %d entries; the shipped catalog has more", len(c.Models()))
	}
}

func TestLoadCatalogRejects(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		wantErr string
	}{
		{"malformed JSON", `{"models": [`, "model catalog"},
		{"an unknown field, which is almost always a typo", `{"models": [], "defualt": {}}`, "unknown field"},
		{"a model without a name", `{"models": [{"context_window": 10, "max_output": 5}]}`, "name is empty"},
		{"a model listed twice", `{"models": [{"name": "a", "context_window": 10, "max_output": 5}, {"name": "A", "context_window": 10, "max_output": 5}]}`, "listed twice"},
		{"a zero context window", `{"models": [{"name": "a", "context_window": 0, "max_output": 5}]}`, "context_window"},
		{"an output limit beyond the window", `{"models": [{"name": "a", "context_window": 10, "max_output": 50}]}`, "max_output"},
		{"a negative price", `{"models": [{"name": "a", "context_window": 10, "max_output": 5, "input_per_mtok": -1}]}`, "negative"},
		{"an invalid default", `{"default": {"context_window": 0, "max_output": 1}, "models": []}`, "default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := llm.LoadCatalog([]byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("LoadCatalog: err = %v; want one mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestCostPricesCachedPromptTokensAtTheCachePrices(t *testing.T) {
	m := llm.ModelInfo{InputPerMTok: 3, OutputPerMTok: 15, CacheReadPerMTok: 0.3, CacheWritePerMTok: 3.75}
	u := llm.Usage{InputTokens: 1_000_000, OutputTokens: 100_000, CacheReadTokens: 600_000, CacheWriteTokens: 200_000}
	// 200k plain at 3, 600k read at 0.3, 200k written at 3.75, 100k out at 15.
	if got, want := m.Cost(u), 0.6+0.18+0.75+1.5; math.Abs(got-want) > 1e-9 {
		t.Fatalf("cost %v, want %v", got, want)
	}
	plain := llm.ModelInfo{InputPerMTok: 3}
	if got := plain.Cost(u); math.Abs(got-3) > 1e-9 {
		t.Fatalf("without cache prices every prompt token costs the input price: %v", got)
	}
}

func TestModelInMatchesAsTheCatalogDoes(t *testing.T) {
	list := []string{"gpt-4o", "Claude-Sonnet-4-5", "openrouter/auto"}
	tests := []struct {
		name, model string
		want        bool
	}{
		{"a listed name", "gpt-4o", true},
		{"case is ignored", "claude-sonnet-4-5", true},
		{"a dated variant of a listed name", "claude-sonnet-4-5-20250929", true},
		{"a vendor prefix is ignored", "openai/gpt-4o", true},
		{"a listed name with a vendor prefix", "openrouter/auto", true},
		{"a longer family is not a variant", "gpt-4omega", false},
		{"an unlisted model", "gpt-4.1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := llm.ModelIn(list, tt.model); got != tt.want {
				t.Errorf("ModelIn(%v, %q) = %v, want %v", list, tt.model, got, tt.want)
			}
		})
	}
	if got := strings.Join(mustLoadCatalog(t).ModelsOf("anthropic"), ","); !strings.Contains(got, "claude-sonnet-4-5") || strings.Contains(got, "gpt") {
		t.Errorf("ModelsOf(anthropic) = %s", got)
	}
}
