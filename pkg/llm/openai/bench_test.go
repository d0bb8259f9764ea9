package openai_test

import (
	"context"
	"testing"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// benchReply is a typical agent turn: a sentence and one tool call.
func benchReply(*llmtest.ChatRequest) llmtest.ServerReply {
	return llmtest.ServerReply{
		Text:      "Let me look that up for you.",
		ToolCalls: []llmtest.ServerCall{{Name: "get_weather", Arguments: `{"city":"Paris","unit":"celsius"}`}},
		Usage:     &llm.Usage{InputTokens: 200, OutputTokens: 20},
	}
}

// Run: go test -run '^$' -bench . -benchmem ./pkg/llm/openai
// Each iteration is a full HTTP round trip to the zero-latency fake, so the
// numbers are provider plus fake-server overhead on loopback.
func BenchmarkComplete(b *testing.B) {
	p, _ := newProvider(b, llmtest.Options{Handler: benchReply})
	req := userRequest("What's the weather in Paris?")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Complete(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStream(b *testing.B) {
	p, _ := newProvider(b, llmtest.Options{Handler: benchReply, FragmentSize: 8})
	req := userRequest("What's the weather in Paris?")
	ctx := context.Background()
	deltas := 0
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Stream(ctx, req, func(llm.Delta) { deltas++ }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(deltas)/float64(b.N), "deltas/op")
}
