package llm

import "context"

// Embedder turns texts into vectors, for a knowledge base's semantic
// search. Implementations are safe for concurrent use.
type Embedder interface {
	// Embed returns one vector per input, in the order of inputs, all of
	// the same length; a provider that answers otherwise is an error.
	// Usage.InputTokens counts what the provider billed. The caller
	// bounds how many inputs go in one call.
	Embed(ctx context.Context, model string, inputs []string) ([][]float32, Usage, error)
}
