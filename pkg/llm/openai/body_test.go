package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/llm/openai"
)

// Every attempt, retries included, must send the same bytes, with the
// fields go-openai cannot express merged in.
func TestEveryAttemptSendsTheWholeBody(t *testing.T) {
	zero, parallel := 0.0, false
	withSeed := func() *llm.Request {
		req := userRequest("hi")
		req.Extra = map[string]any{"seed": 7}
		return req
	}
	withToolResults := func() *llm.Request {
		req := withSeed()
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
				{Type: llm.BlockText, Text: "Checking."},
				{Type: llm.BlockToolUse, ToolUse: &llm.ToolUse{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}},
			}},
			llm.ToolResultMessage(llm.ToolResult{ToolUseID: "call_1", Content: "unknown city", IsError: true}),
		)
		req.ToolChoice, req.ParallelToolCalls, req.Temperature, req.MaxTokens = "auto", &parallel, &zero, 256
		return req
	}
	reasoning := func() *llm.Request {
		req := withSeed()
		req.Model, req.MaxTokens = "o3-mini", 512
		return req
	}
	requests := []struct {
		name  string
		req   func() *llm.Request
		tweak []func(*openai.Config)
	}{
		{"a request with a seed", withSeed, nil},
		{"tool results, tool choice and temperature 0", withToolResults, nil},
		{"a reasoning model's max_completion_tokens", reasoning, nil},
		{"a stream without usage", withSeed, []func(*openai.Config){withNoStreamUsage}},
	}
	for _, r := range requests {
		for _, stream := range []bool{false, true} {
			name := r.name + ", completed"
			if stream {
				name = r.name + ", streamed"
			}
			t.Run(name, func(t *testing.T) {
				p, s := newProvider(t, llmtest.Options{}, r.tweak...)
				s.Enqueue(llmtest.ServerFailure(), llmtest.ServerFailure(), llmtest.ServerReply{Text: "ok"})
				var err error
				if stream {
					_, err = p.Stream(context.Background(), r.req(), nil)
				} else {
					_, err = p.Complete(context.Background(), r.req())
				}
				if err != nil {
					t.Fatalf("call: %v", err)
				}
				recs := s.Requests()
				if len(recs) != 3 {
					t.Fatalf("server saw %d attempts; want 3", len(recs))
				}
				for i, rec := range recs {
					if rec.Request == nil || string(rec.Request.Extra["seed"]) != "7" {
						t.Fatalf("attempt %d sent %q; want the whole request with its seed", i+1, rec.Body)
					}
					if !bytes.Equal(rec.Body, recs[0].Body) {
						t.Fatalf("attempt %d sent\n%s\nthe first\n%s\nwant the same body", i+1, rec.Body, recs[0].Body)
					}
				}
			})
		}
	}
}
