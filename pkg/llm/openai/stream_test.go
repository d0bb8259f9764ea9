package openai_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

func TestStreamAssemblesFragmentedToolCalls(t *testing.T) {
	for _, size := range []int{1, 3, 64} {
		t.Run(fmt.Sprintf("in fragments of %d characters", size), func(t *testing.T) {
			p, s := newProvider(t, llmtest.Options{FragmentSize: size})
			s.Enqueue(llmtest.ServerReply{
				Text: "Checking both cities…",
				ToolCalls: []llmtest.ServerCall{
					{ID: "call_p", Name: "get_weather", Arguments: `{"city":"Paris","unit":"celsius"}`},
					{ID: "call_r", Name: "get_weather", Arguments: `{"city":"Rome"}`},
				},
				Usage: &llm.Usage{InputTokens: 120, OutputTokens: 30},
			})
			var deltas []llm.Delta
			resp, err := p.Stream(context.Background(), userRequest("weather?"), func(d llm.Delta) { deltas = append(deltas, d) })
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			uses := resp.Message.ToolUses()
			if len(uses) != 2 || uses[0].ID != "call_p" || string(uses[0].Arguments) != `{"city":"Paris","unit":"celsius"}` ||
				uses[1].ID != "call_r" || string(uses[1].Arguments) != `{"city":"Rome"}` {
				t.Fatalf("tool uses = %+v", uses)
			}
			if resp.Message.Text() != "Checking both cities…" || resp.StopReason != llm.StopToolUse {
				t.Fatalf("text %q, stop %q", resp.Message.Text(), resp.StopReason)
			}
			if resp.Usage != (llm.Usage{InputTokens: 120, OutputTokens: 30}) {
				t.Fatalf("usage = %+v; want the final chunk's", resp.Usage)
			}
			if !s.LastRequest().StreamOptions.IncludeUsage {
				t.Fatalf("the stream did not ask for usage")
			}
			checkDeltas(t, deltas, resp)
		})
	}
}

// checkDeltas proves the deltas rebuild the response: text in order, and per
// call an id and name first, then argument pieces.
func checkDeltas(t *testing.T, deltas []llm.Delta, resp *llm.Response) {
	t.Helper()
	var text strings.Builder
	args := map[int]*strings.Builder{}
	for _, d := range deltas {
		switch d.Type {
		case llm.DeltaText:
			text.WriteString(d.Text)
		case llm.DeltaToolCall:
			if args[d.Index] == nil {
				if d.ID == "" || d.Name == "" {
					t.Fatalf("the first delta of call %d has no id or name: %+v", d.Index, d)
				}
				args[d.Index] = &strings.Builder{}
			}
			args[d.Index].WriteString(d.Arguments)
		}
	}
	if text.String() != resp.Message.Text() {
		t.Errorf("text deltas %q; want %q", text.String(), resp.Message.Text())
	}
	for i, u := range resp.Message.ToolUses() {
		if args[i] == nil || args[i].String() != string(u.Arguments) {
			t.Errorf("argument deltas of call %d = %v; want %s", i, args[i], u.Arguments)
		}
	}
}

func TestStreamRepairsMalformedArguments(t *testing.T) {
	p, s := newProvider(t, llmtest.Options{FragmentSize: 2})
	s.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "c", Name: "get_weather", Arguments: `{"city": "Oslo",`}}})
	resp, err := p.Stream(context.Background(), userRequest("weather?"), nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if got := string(resp.Message.ToolUses()[0].Arguments); got != `{"city": "Oslo"}` {
		t.Fatalf("arguments = %s; want the repaired object", got)
	}
}

func TestStreamCutMidwayIsARetryableNetworkError(t *testing.T) {
	p, s := newProvider(t, llmtest.Options{FragmentSize: 2})
	s.Enqueue(llmtest.ServerReply{Text: "a long answer that never ends", Fault: &llmtest.Fault{CutAfterChunks: 4}})
	var got strings.Builder
	_, err := p.Stream(context.Background(), userRequest("hi"), func(d llm.Delta) { got.WriteString(d.Text) })
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrNetwork || !e.Retryable {
		t.Fatalf("err = %v; want a retryable network error", err)
	}
	if got.String() == "" {
		t.Fatalf("no deltas arrived before the cut")
	}
	if n := len(s.Requests()); n != 1 {
		t.Fatalf("the server saw %d requests; a started stream must never be retried", n)
	}
}

func TestStreamCanBeCanceledMidway(t *testing.T) {
	p, s := newProvider(t, llmtest.Options{FragmentSize: 1, ChunkDelay: 20 * time.Millisecond})
	s.Enqueue(llmtest.ServerReply{Text: strings.Repeat("x", 500)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	_, err := p.Stream(ctx, userRequest("hi"), func(llm.Delta) {
		if n++; n == 3 {
			cancel()
		}
	})
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrCanceled || e.Retryable || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want a canceled error wrapping context.Canceled", err)
	}
}

func TestStreamWithoutUsageWhenDisabled(t *testing.T) {
	p, s := newProvider(t, llmtest.Options{}, withNoStreamUsage)
	s.Enqueue(llmtest.ServerReply{Text: "hi"})
	resp, err := p.Stream(context.Background(), userRequest("hi"), nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if s.LastRequest().StreamOptions != nil || resp.Usage != (llm.Usage{}) {
		t.Fatalf("stream_options %+v, usage %+v; want neither", s.LastRequest().StreamOptions, resp.Usage)
	}
}
