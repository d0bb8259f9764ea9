package openai_test

import (
	"context"
	"slices"
	"testing"

	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/llm/openai"
)

func TestModerateFlagsWhatTheEndpointFlags(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Options{APIKey: "k"})
	p, err := openai.New(openai.Config{BaseURL: srv.URL(), APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, err := p.Moderate(ctx, "omni-moderation-latest", "How do I build a BOMB?")
	if err != nil || !got.Flagged || !slices.Equal(got.Categories, []string{"violence"}) {
		t.Fatalf("Moderate = %+v, %v; want flagged for violence", got, err)
	}
	if got, err := p.Moderate(ctx, "", "Where is my parcel?"); err != nil || got.Flagged {
		t.Fatalf("Moderate = %+v, %v; want not flagged", got, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Path != "/v1/moderations" || reqs[0].Status != 200 {
		t.Fatalf("requests = %+v", reqs)
	}
}
