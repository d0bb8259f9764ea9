package openai

import (
	"context"
	"encoding/json"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/parleyhq/parley/pkg/llm"
)

var _ llm.Moderator = (*Provider)(nil)

// Moderate calls POST /moderations with one text. Its failures are the
// chat calls' (*llm.Error). go-openai accepts only OpenAI's moderation
// model names (omni-moderation-latest, text-moderation-stable, ...); ""
// leaves the choice to the server.
func (p *Provider) Moderate(ctx context.Context, model, text string) (llm.Moderation, error) {
	c := &call{}
	resp, err := p.client.Moderations(withCall(ctx, c), goopenai.ModerationRequest{Input: text, Model: model})
	if err != nil {
		return llm.Moderation{}, p.toError(ctx, c, err)
	}
	var out llm.Moderation
	for _, r := range resp.Results {
		if !r.Flagged {
			continue
		}
		out.Flagged = true
		// The categories are a struct of booleans named by their JSON
		// tags: read them back as a map to list the ones set.
		b, _ := json.Marshal(r.Categories)
		var cats map[string]bool
		_ = json.Unmarshal(b, &cats)
		for name, on := range cats {
			if on {
				out.Categories = append(out.Categories, name)
			}
		}
	}
	return out, nil
}
