package llmtest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

func assistantCalls(ids ...string) llm.Message {
	m := llm.Message{Role: llm.RoleAssistant}
	for _, id := range ids {
		m.Content = append(m.Content, llm.Block{Type: llm.BlockToolUse,
			ToolUse: &llm.ToolUse{ID: id, Name: "lookup", Arguments: []byte(`{}`)}})
	}
	return m
}

func result(id string) llm.Message {
	return llm.ToolResultMessage(llm.ToolResult{ToolUseID: id, Content: "ok"})
}

func TestCheckRequest(t *testing.T) {
	tests := []struct {
		name    string
		msgs    []llm.Message
		tools   []llm.ToolDefinition
		wantErr string
	}{
		{"a plain question passes", []llm.Message{llm.UserText("hi")}, nil, ""},
		{"answered calls pass in any order",
			[]llm.Message{llm.UserText("hi"), assistantCalls("a", "b"), result("b"), result("a"), llm.UserText("more")}, nil, ""},
		{"no messages fail", nil, nil, "no messages"},
		{"a tool result first fails", []llm.Message{result("a")}, nil, "answers no pending tool call"},
		{"a result for an unknown call fails",
			[]llm.Message{llm.UserText("hi"), assistantCalls("a"), result("x")}, nil, `"x" answers no pending`},
		{"a call without its result before the next user message fails",
			[]llm.Message{llm.UserText("hi"), assistantCalls("a", "b"), result("a"), llm.UserText("more")}, nil, `"b" has no result`},
		{"a call without its result at the end fails",
			[]llm.Message{llm.UserText("hi"), assistantCalls("a")}, nil, `"a" has no result`},
		{"an empty assistant message fails",
			[]llm.Message{llm.UserText("hi"), {Role: llm.RoleAssistant}}, nil, "neither text nor tool calls"},
		{"an unknown role fails", []llm.Message{{Role: "system"}}, nil, "invalid role"},
		{"a duplicate call id fails",
			[]llm.Message{llm.UserText("hi"), assistantCalls("a"), result("a"), assistantCalls("a"), result("a")}, nil, "used twice"},
		{"an invalid tool name fails", []llm.Message{llm.UserText("hi")},
			[]llm.ToolDefinition{{Name: "bad name"}}, "invalid name"},
		{"a duplicate tool fails", []llm.Message{llm.UserText("hi")},
			[]llm.ToolDefinition{{Name: "a"}, {Name: "a"}}, "duplicate name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := llmtest.CheckRequest(&llm.Request{Model: "m", Messages: tt.msgs, Tools: tt.tools})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestScriptedStreamsRepliesInOrder(t *testing.T) {
	s := llmtest.NewScripted(
		llmtest.Calls(llmtest.Call("", "lookup", `{"q":"boots"}`)),
		llmtest.Reply{Text: "two words", Usage: llm.Usage{InputTokens: 3, OutputTokens: 2}},
	)
	ctx := context.Background()
	req := &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}}
	var deltas []llm.Delta
	resp, err := s.Stream(ctx, req, func(d llm.Delta) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolUses()
	if len(calls) != 1 || calls[0].ID != "call_1" || resp.StopReason != llm.StopToolUse {
		t.Fatalf("first reply = %+v, want one call with a generated id", resp)
	}
	var args string
	for _, d := range deltas {
		args += d.Arguments
	}
	if args != `{"q":"boots"}` || deltas[0].Name != "lookup" {
		t.Fatalf("tool call deltas = %+v", deltas)
	}

	req.Messages = append(req.Messages, resp.Message, result("call_1"))
	deltas = nil
	resp, err = s.Stream(ctx, req, func(d llm.Delta) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text() != "two words" || len(deltas) != 2 || deltas[0].Text != "two " || resp.Usage.OutputTokens != 2 {
		t.Fatalf("second reply = %+v, deltas %+v", resp, deltas)
	}
	if got := s.Requests(); len(got) != 2 || len(got[0].Messages) != 1 {
		t.Fatalf("recorded requests = %d (first with %d messages), want 2 and 1", len(got), len(got[0].Messages))
	}
	if s.Remaining() != 0 || s.Err() != nil {
		t.Fatalf("remaining %d, err %v", s.Remaining(), s.Err())
	}
}

func TestScriptedRejectsAndRemembersBadRequests(t *testing.T) {
	s := llmtest.NewScripted(llmtest.Reply{Text: "never", Check: func(r *llm.Request) error {
		if r.System == "" {
			return errors.New("system prompt missing")
		}
		return nil
	}})
	ctx := context.Background()
	_, err := s.Complete(ctx, &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi"), assistantCalls("a")}})
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.ErrBadRequest || le.Retryable {
		t.Fatalf("unanswered call: err = %v, want a non-retryable bad request", err)
	}
	if _, err := s.Complete(ctx, &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}}); err == nil {
		t.Fatal("a failing Check must fail the call")
	}
	if _, err := s.Complete(ctx, &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}}); err == nil {
		t.Fatal("an exhausted script must fail the call")
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "system prompt missing") || !strings.Contains(err.Error(), "exhausted") {
		t.Fatalf("Err() = %v, want every failure", err)
	}
}

func TestScriptedReturnsScriptedErrors(t *testing.T) {
	want := &llm.Error{Kind: llm.ErrRateLimit, Retryable: true}
	s := llmtest.NewScripted(llmtest.Fail(want))
	_, err := s.Complete(context.Background(), &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}})
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want the scripted error", err)
	}
}
