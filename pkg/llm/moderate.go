package llm

import "context"

// Moderator screens a text for harmful content, as OpenAI's moderation
// endpoint does. Implementations are safe for concurrent use.
type Moderator interface {
	// Moderate returns whether the text is flagged, and the categories
	// that flagged it. model "" is the provider's default.
	Moderate(ctx context.Context, model, text string) (Moderation, error)
}

// Moderation is a moderation endpoint's verdict on one text.
type Moderation struct {
	Flagged    bool
	Categories []string
}
