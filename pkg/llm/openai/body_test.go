package openai_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// The provider keeps a single copy of the request body, so each retry
// must still send all of it, with the fields go-openai cannot express.
func TestEveryAttemptSendsTheWholeBody(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
	}{
		{"a completion retried twice", false},
		{"a stream retried twice before it began", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, s := newProvider(t, llmtest.Options{})
			s.Enqueue(llmtest.ServerFailure(), llmtest.ServerFailure(), llmtest.ServerReply{Text: "ok"})
			req := userRequest("hi")
			req.Extra = map[string]any{"seed": 7}
			var err error
			if tt.stream {
				_, err = p.Stream(context.Background(), req, nil)
			} else {
				_, err = p.Complete(context.Background(), req)
			}
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			recs := s.Requests()
			if len(recs) != 3 {
				t.Fatalf("server saw %d attempts; want 3", len(recs))
			}
			for i, r := range recs {
				if r.Request == nil || string(r.Request.Extra["seed"]) != "7" || string(r.Request.Messages[len(r.Request.Messages)-1].Content) != `"hi"` {
					t.Fatalf("attempt %d sent %q; want the whole request with its seed", i+1, r.Body)
				}
				if !bytes.Equal(r.Body, recs[0].Body) {
					t.Fatalf("attempt %d sent %d bytes, the first %d; want the same body", i+1, len(r.Body), len(recs[0].Body))
				}
			}
		})
	}
}
