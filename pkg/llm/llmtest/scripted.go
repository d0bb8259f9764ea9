package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/parleyhq/parley/pkg/llm"
)

// Reply is one scripted model answer: text, tool calls, or an error.
type Reply struct {
	// Text is the assistant's text, streamed word by word.
	Text string
	// ToolCalls are the calls the model makes; an empty ID is filled with
	// "call_<n>".
	ToolCalls []llm.ToolUse
	Usage     llm.Usage
	// Model is reported as the answering model; empty echoes the request's.
	Model string
	// Err, when set, is returned instead of an answer.
	Err error
	// Check, when set, inspects the request before the reply is given; an
	// error fails the call and is kept for Err.
	Check func(*llm.Request) error
}

// Text returns a reply holding only text.
func Text(text string) Reply { return Reply{Text: text} }

// Calls returns a reply that calls the given tools.
func Calls(calls ...llm.ToolUse) Reply { return Reply{ToolCalls: calls} }

// Call returns a tool call with JSON arguments.
func Call(id, name, args string) llm.ToolUse {
	return llm.ToolUse{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// Fail returns a reply that fails with err.
func Fail(err error) Reply { return Reply{Err: err} }

// Scripted is an in-process llm.Provider that replays replies in order with
// no latency. It is as strict about the conversation as the real API: a tool
// result that answers no pending call, a call left without its result, a
// message in the wrong role, an invalid tool name or non-JSON arguments fail
// the call with a bad_request error, and the failure is kept for Err so a
// test notices even when the code under test handles the error.
type Scripted struct {
	// ProviderName is returned by Name; empty means "scripted".
	ProviderName string
	// Cycle replays the script from the start when it runs out, for benchmarks.
	Cycle bool
	// SkipRecording keeps Requests empty, so benchmarks measure the caller.
	SkipRecording bool

	mu       sync.Mutex
	replies  []Reply
	next     int
	calls    int
	requests []*llm.Request
	failures []error
}

// NewScripted returns a provider that answers with replies in order.
func NewScripted(replies ...Reply) *Scripted {
	return &Scripted{replies: replies}
}

// Add appends replies to the script.
func (s *Scripted) Add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Name returns the provider's name.
func (s *Scripted) Name() string {
	if s.ProviderName == "" {
		return "scripted"
	}
	return s.ProviderName
}

// Requests returns copies of the requests received so far, in order.
func (s *Scripted) Requests() []*llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*llm.Request(nil), s.requests...)
}

// Remaining returns how many replies have not been used.
func (s *Scripted) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.replies) - s.next
}

// Err returns every strictness or Check failure seen so far, joined.
func (s *Scripted) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.failures...)
}

// Complete answers with the next reply.
func (s *Scripted) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return s.Stream(ctx, req, nil)
}

// Stream answers with the next reply, sending its text word by word and each
// tool call in two fragments to onDelta.
func (s *Scripted) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, &llm.Error{Kind: llm.ErrCanceled, Provider: s.Name(), Message: "request canceled", Err: err}
	}
	reply, err := s.take(req)
	if err != nil {
		return nil, err
	}
	if reply.Err != nil {
		return nil, reply.Err
	}
	resp := s.respond(req, reply)
	if onDelta != nil {
		streamDeltas(resp.Message, onDelta)
	}
	return resp, nil
}

// take validates and records req and pops the next reply.
func (s *Scripted) take(req *llm.Request) (Reply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.SkipRecording {
		s.requests = append(s.requests, cloneRequest(req))
	}
	if err := CheckRequest(req); err != nil {
		return Reply{}, s.reject(err)
	}
	if s.next >= len(s.replies) {
		if !s.Cycle || len(s.replies) == 0 {
			return Reply{}, s.reject(fmt.Errorf("script exhausted after %d replies", s.next))
		}
		s.next = 0
	}
	reply := s.replies[s.next]
	s.next++
	if reply.Check != nil {
		if err := reply.Check(req); err != nil {
			return Reply{}, s.reject(fmt.Errorf("reply %d: check: %w", s.next, err))
		}
	}
	return reply, nil
}

func (s *Scripted) reject(err error) error {
	s.failures = append(s.failures, err)
	return &llm.Error{Kind: llm.ErrBadRequest, Provider: s.Name(), StatusCode: 400, Message: err.Error(), Err: err}
}

func (s *Scripted) respond(req *llm.Request, reply Reply) *llm.Response {
	s.mu.Lock()
	msg := llm.Message{Role: llm.RoleAssistant}
	if reply.Text != "" {
		msg.Content = append(msg.Content, llm.Block{Type: llm.BlockText, Text: reply.Text})
	}
	for _, c := range reply.ToolCalls {
		s.calls++
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d", s.calls)
		}
		c := c
		msg.Content = append(msg.Content, llm.Block{Type: llm.BlockToolUse, ToolUse: &c})
	}
	s.mu.Unlock()
	stop := llm.StopEndTurn
	if len(reply.ToolCalls) > 0 {
		stop = llm.StopToolUse
	}
	model := reply.Model
	if model == "" {
		model = req.Model
	}
	return &llm.Response{Message: msg, StopReason: stop, Usage: reply.Usage, Model: model}
}

// streamDeltas sends msg the way a streaming API would: text in word-sized
// pieces, each tool call's arguments split in two.
func streamDeltas(msg llm.Message, onDelta func(llm.Delta)) {
	index := 0
	for _, b := range msg.Content {
		switch b.Type {
		case llm.BlockText:
			for _, piece := range strings.SplitAfter(b.Text, " ") {
				if piece != "" {
					onDelta(llm.Delta{Type: llm.DeltaText, Text: piece})
				}
			}
		case llm.BlockToolUse:
			args := string(b.ToolUse.Arguments)
			half := len(args) / 2
			onDelta(llm.Delta{Type: llm.DeltaToolCall, Index: index, ID: b.ToolUse.ID, Name: b.ToolUse.Name, Arguments: args[:half]})
			onDelta(llm.Delta{Type: llm.DeltaToolCall, Index: index, Arguments: args[half:]})
			index++
		}
	}
}

// cloneRequest copies req and its message list, so the caller may reuse its
// buffers after the call. Messages are values whose blocks are never edited
// in place by well-behaved callers, so a shallow copy of the list suffices.
func cloneRequest(req *llm.Request) *llm.Request {
	c := *req
	c.Messages = append([]llm.Message(nil), req.Messages...)
	c.Tools = append([]llm.ToolDefinition(nil), req.Tools...)
	return &c
}

// CheckRequest applies the rules a real chat-completion API enforces on a
// conversation: a model is named; tools have valid, unique names; the first
// message is not a tool result; every tool result answers a call of the
// assistant message before it; every call is answered before the next user or
// assistant message and before the request ends; an assistant message has text
// or calls; call ids are unique. Like the real API it does not judge the
// arguments of past calls: repairing them is the provider's job.
func CheckRequest(req *llm.Request) error {
	if req.Model == "" {
		return errors.New("request names no model")
	}
	if len(req.Messages) == 0 {
		return errors.New("request has no messages")
	}
	if err := checkTools(req.Tools); err != nil {
		return err
	}
	var pending []string
	seen := map[string]bool{}
	for i, m := range req.Messages {
		switch m.Role {
		case llm.RoleUser:
			if len(pending) > 0 {
				return fmt.Errorf("messages[%d]: user message while tool call %q has no result", i, pending[0])
			}
		case llm.RoleAssistant:
			if len(pending) > 0 {
				return fmt.Errorf("messages[%d]: assistant message while tool call %q has no result", i, pending[0])
			}
			// Blocks are walked directly: this runs on every call of every
			// benchmark, over the whole history.
			hasText, hasCalls := false, false
			for _, b := range m.Content {
				switch {
				case b.Type == llm.BlockText && strings.TrimSpace(b.Text) != "":
					hasText = true
				case b.Type == llm.BlockToolUse && b.ToolUse != nil:
					hasCalls = true
					if err := checkCall(*b.ToolUse, seen); err != nil {
						return fmt.Errorf("messages[%d]: %w", i, err)
					}
					pending = append(pending, b.ToolUse.ID)
				}
			}
			if !hasText && !hasCalls {
				return fmt.Errorf("messages[%d]: assistant message has neither text nor tool calls", i)
			}
		case llm.RoleTool:
			r := m.ToolResult()
			if r == nil {
				return fmt.Errorf("messages[%d]: tool message without a tool result", i)
			}
			at := indexOf(pending, r.ToolUseID)
			if at < 0 {
				return fmt.Errorf("messages[%d]: tool result %q answers no pending tool call", i, r.ToolUseID)
			}
			pending = append(pending[:at], pending[at+1:]...)
		default:
			return fmt.Errorf("messages[%d]: invalid role %q", i, m.Role)
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("tool call %q has no result", pending[0])
	}
	return nil
}

func checkTools(tools []llm.ToolDefinition) error {
	names := make(map[string]bool, len(tools))
	for i, t := range tools {
		if !llm.ValidToolName(t.Name) {
			return fmt.Errorf("tools[%d]: invalid name %q", i, t.Name)
		}
		if names[t.Name] {
			return fmt.Errorf("tools[%d]: duplicate name %q", i, t.Name)
		}
		names[t.Name] = true
		if len(t.Parameters) > 0 && !json.Valid(t.Parameters) {
			return fmt.Errorf("tools[%d]: parameters are not JSON", i)
		}
	}
	return nil
}

func checkCall(c llm.ToolUse, seen map[string]bool) error {
	if c.ID == "" {
		return errors.New("tool call without id")
	}
	if seen[c.ID] {
		return fmt.Errorf("tool call id %q is used twice", c.ID)
	}
	seen[c.ID] = true
	if !llm.ValidToolName(c.Name) {
		return fmt.Errorf("tool call %q: invalid name %q", c.ID, c.Name)
	}
	return nil
}

func indexOf(ids []string, id string) int {
	for i, v := range ids {
		if v == id {
			return i
		}
	}
	return -1
}
