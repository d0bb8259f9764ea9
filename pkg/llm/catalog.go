package llm

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// ModelInfo is what the catalog knows about one model: its limits and price.
type ModelInfo struct {
	Name     string `json:"name"`
	Provider string `json:"provider,omitempty"`
	// ContextWindow is the number of tokens the prompt and reply share.
	ContextWindow int `json:"context_window"`
	// MaxOutput is the most tokens the model generates in one reply.
	MaxOutput int `json:"max_output"`
	// InputPerMTok and OutputPerMTok are USD per million tokens.
	InputPerMTok  float64 `json:"input_per_mtok"`
	OutputPerMTok float64 `json:"output_per_mtok"`
	// CacheReadPerMTok and CacheWritePerMTok price prompt tokens read from
	// and written to the provider's cache; 0 prices them as input.
	CacheReadPerMTok  float64 `json:"cache_read_per_mtok,omitempty"`
	CacheWritePerMTok float64 `json:"cache_write_per_mtok,omitempty"`
	// Reasoning marks models that think before answering: they take
	// max_completion_tokens and no sampling temperature.
	Reasoning bool `json:"reasoning,omitempty"`
	// Images marks models that read images in user messages.
	Images bool `json:"images,omitempty"`
}

// Cost returns the USD price of u on this model. Cached prompt tokens,
// which u.InputTokens includes, are priced at the cache prices when the
// catalog has them.
func (m ModelInfo) Cost(u Usage) float64 {
	read, write := m.CacheReadPerMTok, m.CacheWritePerMTok
	if read == 0 {
		read = m.InputPerMTok
	}
	if write == 0 {
		write = m.InputPerMTok
	}
	plain := u.InputTokens - u.CacheReadTokens - u.CacheWriteTokens
	return (float64(plain)*m.InputPerMTok + float64(u.CacheReadTokens)*read +
		float64(u.CacheWriteTokens)*write + float64(u.OutputTokens)*m.OutputPerMTok) / 1e6
}

// unknownModel is used when a catalog file names no default. A small window is
// the safe guess: compacting a conversation too early costs a summary, too late
// costs a failed request.
func unknownModel() ModelInfo {
	return ModelInfo{Name: "unknown", ContextWindow: 8192, MaxOutput: 2048}
}

// Catalog answers what a model can hold and what it costs. It is immutable
// after LoadCatalog and safe for concurrent use.
type Catalog struct {
	models map[string]ModelInfo // by lower-case name
	names  []string             // lower-case names, longest first, for prefix lookups
	def    ModelInfo
}

type catalogFile struct {
	Default *ModelInfo  `json:"default"`
	Models  []ModelInfo `json:"models"`
}

// LoadCatalog parses a catalog file (see configs/models.json): an optional
// "default" entry for unknown models and a list of "models".
func LoadCatalog(data []byte) (*Catalog, error) {
	var f catalogFile
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("llm: model catalog: %w", err)
	}
	c := &Catalog{models: make(map[string]ModelInfo, len(f.Models)), def: unknownModel()}
	if f.Default != nil {
		if err := checkModelInfo(*f.Default); err != nil {
			return nil, fmt.Errorf("llm: model catalog: default: %w", err)
		}
		c.def = *f.Default
	}
	for i, m := range f.Models {
		key := strings.ToLower(strings.TrimSpace(m.Name))
		if key == "" {
			return nil, fmt.Errorf("llm: model catalog: models[%d]: name is empty", i)
		}
		if err := checkModelInfo(m); err != nil {
			return nil, fmt.Errorf("llm: model catalog: %s: %w", m.Name, err)
		}
		if _, dup := c.models[key]; dup {
			return nil, fmt.Errorf("llm: model catalog: %s is listed twice", m.Name)
		}
		c.models[key] = m
		c.names = append(c.names, key)
	}
	sort.Slice(c.names, func(i, j int) bool { return len(c.names[i]) > len(c.names[j]) })
	return c, nil
}

func checkModelInfo(m ModelInfo) error {
	switch {
	case m.ContextWindow <= 0:
		return fmt.Errorf("context_window must be positive")
	case m.MaxOutput <= 0 || m.MaxOutput > m.ContextWindow:
		return fmt.Errorf("max_output must be positive and within context_window")
	case m.InputPerMTok < 0 || m.OutputPerMTok < 0:
		return fmt.Errorf("prices must not be negative")
	}
	return nil
}

// Lookup finds model by exact name, then by the longest known name it starts
// with at a word boundary, so dated or tagged variants ("gpt-4o-mini-2024-07-18",
// "llama3.1:8b") resolve to their family. A vendor prefix such as "openai/" is
// ignored. The returned info keeps the catalog entry's name.
func (c *Catalog) Lookup(model string) (ModelInfo, bool) {
	key := strings.ToLower(strings.TrimSpace(model))
	if m, ok := c.lookup(key); ok {
		return m, true
	}
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return c.lookup(key[i+1:])
	}
	return ModelInfo{}, false
}

func (c *Catalog) lookup(key string) (ModelInfo, bool) {
	if key == "" {
		return ModelInfo{}, false
	}
	if m, ok := c.models[key]; ok {
		return m, true
	}
	for _, name := range c.names {
		if isVariant(key, name) {
			return c.models[name], true
		}
	}
	return ModelInfo{}, false
}

// isVariant reports whether key is a dated or tagged variant of name
// (both lower case): name followed by a variant suffix.
func isVariant(key, name string) bool {
	return len(key) > len(name) && strings.HasPrefix(key, name) && isVariantSeparator(key[len(name)])
}

// ModelIn reports whether model is one of names, or a dated or tagged
// variant of one, as Catalog.Lookup matches them: case and a vendor
// prefix ("openai/") of model are ignored.
func ModelIn(names []string, model string) bool {
	key := strings.ToLower(strings.TrimSpace(model))
	bare := key
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		bare = key[i+1:]
	}
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		if n != "" && (key == n || bare == n || isVariant(key, n) || isVariant(bare, n)) {
			return true
		}
	}
	return false
}

// ModelsOf returns the names of the catalog's models of one provider
// (ModelInfo.Provider: "openai", "anthropic", ...), sorted.
func (c *Catalog) ModelsOf(provider string) []string {
	var out []string
	for _, m := range c.Models() {
		if m.Provider == provider {
			out = append(out, m.Name)
		}
	}
	return out
}

// isVariantSeparator reports whether b may start a variant suffix: "-2024-07-18",
// ":8b", "@latest". It keeps "gpt-4" from matching "gpt-4o" or "gpt-4.1".
func isVariantSeparator(b byte) bool { return b == '-' || b == ':' || b == '@' || b == '_' }

// Info returns what the catalog knows about model, or the conservative default
// (named after model) when it knows nothing.
func (c *Catalog) Info(model string) ModelInfo {
	if m, ok := c.Lookup(model); ok {
		return m
	}
	m := c.def
	m.Name = model
	return m
}

// Default returns the info used for unknown models.
func (c *Catalog) Default() ModelInfo { return c.def }

// Cost returns the USD price of u on model; unknown models cost the default's
// price (zero in the shipped catalog, as unknown models are usually local).
func (c *Catalog) Cost(model string, u Usage) float64 { return c.Info(model).Cost(u) }

// Models returns every catalog entry, sorted by name.
func (c *Catalog) Models() []ModelInfo {
	out := make([]ModelInfo, 0, len(c.models))
	for _, m := range c.models {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
