package openai

import (
	"context"
	"fmt"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/parleyhq/parley/pkg/llm"
)

var _ llm.Embedder = (*Provider)(nil)

// Embed calls the embeddings endpoint with every input in one request.
// Its failures are the chat calls' (*llm.Error: a 429 retryable with the
// server's Retry-After); an answer with a vector missing, or vectors of
// different lengths, is a server error.
func (p *Provider) Embed(ctx context.Context, model string, inputs []string) ([][]float32, llm.Usage, error) {
	if len(inputs) == 0 {
		return nil, llm.Usage{}, nil
	}
	if model == "" {
		return nil, llm.Usage{}, p.errs.BadRequest("no embedding model named")
	}
	c := &call{}
	resp, err := p.client.CreateEmbeddings(withCall(ctx, c), goopenai.EmbeddingRequestStrings{
		Input: inputs,
		Model: goopenai.EmbeddingModel(model),
	})
	if err != nil {
		return nil, llm.Usage{}, p.toError(ctx, c, err)
	}
	usage := llm.Usage{InputTokens: resp.Usage.PromptTokens}
	out := make([][]float32, len(inputs))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(out) || out[d.Index] != nil {
			return nil, usage, p.bad("the answer holds a vector for input %d of %d, or twice", d.Index, len(inputs))
		}
		out[d.Index] = d.Embedding
	}
	for i, v := range out {
		switch {
		case len(v) == 0:
			return nil, usage, p.bad("the answer holds no vector for input %d of %d", i, len(inputs))
		case len(v) != len(out[0]):
			return nil, usage, p.bad("the vector of input %d has %d dimensions, that of input 0 %d", i, len(v), len(out[0]))
		}
	}
	return out, usage, nil
}

// bad is a malformed answer from the server: not retryable, as the same
// request will get the same answer.
func (p *Provider) bad(format string, args ...any) error {
	return &llm.Error{Kind: llm.ErrServer, Provider: p.name, Message: fmt.Sprintf(format, args...)}
}
