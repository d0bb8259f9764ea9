package agent

import (
	"context"
	"errors"

	"github.com/parleyhq/parley/pkg/llm"
)

// Choice is the provider and model for one model call.
type Choice struct {
	Provider llm.Provider
	Model    string
	// ContextWindow is the model's window in tokens; 0 turns compaction off.
	ContextWindow int
}

func (c Choice) label() string { return c.Provider.Name() + "/" + c.Model }

// ResolveInfo tells the resolver which call it chooses for.
type ResolveInfo struct {
	Turn int
	// Attempt is 0 for a turn's first call and counts calls after retryable
	// failures; Failed is the last failure. A resolver that offers the same
	// model again should first wait what llm.IsRetryable(Failed) asks: the
	// loop does not sleep on its own, and providers already retry with backoff.
	Attempt int
	Failed  error
}

// ProviderResolver chooses the provider and model before every model call:
// fallback models after a retryable failure and quota downgrades are the
// application's policy, not the loop's.
type ProviderResolver interface {
	Resolve(ctx context.Context, info ResolveInfo) (Choice, error)
}

// ResolverFunc adapts a function to a ProviderResolver.
type ResolverFunc func(ctx context.Context, info ResolveInfo) (Choice, error)

// Resolve calls f.
func (f ResolverFunc) Resolve(ctx context.Context, info ResolveInfo) (Choice, error) {
	return f(ctx, info)
}

// ErrNoFallback is returned by a resolver that has no model left to try.
var ErrNoFallback = errors.New("no fallback model left")

// Models returns a resolver that uses models[0] and, after a retryable
// failure within a turn, the next model in order. Every turn starts again
// with models[0], so a recovered primary is used again. All models share one
// context window; Fallback looks each one up.
func Models(p llm.Provider, contextWindow int, models ...string) ProviderResolver {
	return Fallback(p, func(string) int { return contextWindow }, models...)
}

// Fallback is Models with each model's context window from window, usually
// a catalog lookup.
func Fallback(p llm.Provider, window func(model string) int, models ...string) ProviderResolver {
	return ResolverFunc(func(ctx context.Context, info ResolveInfo) (Choice, error) {
		if info.Attempt >= len(models) {
			return Choice{}, ErrNoFallback
		}
		m := models[info.Attempt]
		return Choice{Provider: p, Model: m, ContextWindow: window(m)}, nil
	})
}
