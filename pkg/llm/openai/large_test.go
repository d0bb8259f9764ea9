package openai_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// Requests, SSE lines and replies many times the size of a connection's
// read and write buffers (4 KiB) must cross whole.
func TestLargeMessagesCrossWhole(t *testing.T) {
	system := strings.Repeat("Answer in full sentences. ", 2000) // ~50 KiB
	reply := strings.Repeat("The forecast says sun. ", 1000)     // ~23 KiB
	tests := []struct {
		name   string
		stream bool
		// fragment is the streamed text per SSE line; 0 is the fake's default.
		fragment int
	}{
		{"a complete reply arrives in one body", false, 0},
		{"a stream of small chunks arrives in order", true, 0},
		{"a stream whose every line is larger than a buffer arrives whole", true, 8 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, s := newProvider(t, llmtest.Options{FragmentSize: tt.fragment})
			s.Enqueue(llmtest.ServerReply{Text: reply})
			req := userRequest("weather?")
			req.System = system
			var resp *llm.Response
			var err error
			if tt.stream {
				resp, err = p.Stream(context.Background(), req, nil)
			} else {
				resp, err = p.Complete(context.Background(), req)
			}
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if got := s.LastRequest().System(); got != system {
				t.Fatalf("the server got a system prompt of %d bytes; want %d", len(got), len(system))
			}
			if got := resp.Message.Text(); got != reply {
				t.Fatalf("the reply has %d bytes; want %d", len(got), len(reply))
			}
		})
	}
}
