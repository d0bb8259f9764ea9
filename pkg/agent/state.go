package agent

import (
	"encoding/json"
	"time"

	"github.com/parleyhq/parley/pkg/llm"
)

// Kind says what a message is to the application and whether the model sees it.
type Kind string

// Message kinds. User, assistant, tool_result and summary messages are sent to
// the model; context_note, system_event and tool_log are for the application
// only (the admin's dialog view, audits) and never sent. An operator message
// is what a person said to the user while the dialog was handed off: the
// model sees it as a note on the user's side (operatorNote), never as its
// own words.
const (
	KindUser        Kind = "user"
	KindAssistant   Kind = "assistant"
	KindToolResult  Kind = "tool_result"
	KindSummary     Kind = "summary"
	KindContextNote Kind = "context_note"
	KindSystemEvent Kind = "system_event"
	KindToolLog     Kind = "tool_log"
	KindOperator    Kind = "operator"
)

// Sent reports whether messages of kind k are part of the model's context.
func (k Kind) Sent() bool {
	switch k {
	case KindUser, KindAssistant, KindToolResult, KindSummary, KindOperator:
		return true
	}
	return false
}

// Origins of messages the loop writes itself rather than the user or model.
const (
	OriginLoop = "loop" // nudges, skipped-call results, stop notes
)

// Message is one entry of a dialog: a provider-neutral message plus what the
// application needs to store and show it. It is a JSON value so the platform
// can persist it as is.
type Message struct {
	Kind Kind `json:"kind"`
	llm.Message
	// Model and Provider produced an assistant or summary message.
	Model    string `json:"model,omitempty"`
	Provider string `json:"provider,omitempty"`
	// Turn is the run's turn that produced the message.
	Turn int `json:"turn,omitempty"`
	// Usage is the token count of the call that produced the message.
	Usage llm.Usage `json:"usage,omitzero"`
	// Tool describes how a tool call went, for tool_result messages.
	Tool *ToolInfo `json:"tool,omitempty"`
	// Covers is, for a summary, the number of leading dialog messages it
	// replaces in the model's context: messages before index Covers are not
	// sent once the summary exists.
	Covers int `json:"covers,omitempty"`
	// Origin is OriginLoop for messages the loop wrote itself.
	Origin string `json:"origin,omitempty"`
	// Author is the person who wrote an operator message, as the user saw
	// them named.
	Author string    `json:"author,omitempty"`
	Time   time.Time `json:"time"`
}

// ToolInfo is how one tool call went.
type ToolInfo struct {
	DurationMS int64  `json:"duration_ms"`
	Status     int    `json:"status,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Truncated  bool   `json:"truncated,omitempty"`
	// Skipped says the call was never run (steering, a stop, a loop).
	Skipped bool `json:"skipped,omitempty"`
}

// PendingCall is a tool call the run is paused on.
type PendingCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Kind is PendingClient or PendingConfirmation.
	Kind string `json:"kind"`
}

// Pending call kinds.
const (
	PendingClient       = "client"       // the caller runs the tool and submits its result
	PendingConfirmation = "confirmation" // a human approves or declines the call
)

// State is everything a run needs to continue, as plain JSON: the dialog's
// messages, the current run's counters and usage, the calls it is paused on
// and the memory of loop detection. The platform loads it (or rebuilds it from
// stored messages), runs the loop, and keeps it between requests; any server
// instance can resume a paused run from it.
type State struct {
	Messages []Message `json:"messages"`
	// Turns counts the model calls of the current run (since the last user
	// message); it is what max_turns limits.
	Turns int `json:"turns"`
	// Usage is the current run's usage; it is what token_budget limits.
	Usage llm.Usage `json:"usage"`
	// TotalUsage is the dialog's usage over all runs.
	TotalUsage llm.Usage `json:"total_usage"`
	// Pending are the calls a paused run waits for.
	Pending []PendingCall `json:"pending,omitempty"`
	// Loop remembers recent tool-call batches to spot repetition.
	Loop LoopMemory `json:"loop"`
	// ConsecutiveErrors counts turns in a row whose tool calls all failed.
	ConsecutiveErrors int `json:"consecutive_errors,omitempty"`
	// Model and Provider answered the last turn; a change is a provider switch.
	Model    string `json:"model,omitempty"`
	Provider string `json:"provider,omitempty"`
	// StopReason is how the last run ended.
	StopReason StopReason `json:"stop_reason,omitempty"`
	// Skills are the skills loaded in this dialog, in loading order; they
	// stay loaded across runs.
	Skills []string `json:"skills,omitempty"`
}

// Paused reports whether the run waits for client results or confirmations.
func (s *State) Paused() bool { return len(s.Pending) > 0 }

// resetRun starts a new run's counters: limits apply per user message.
func (s *State) resetRun() {
	s.Turns = 0
	s.Usage = llm.Usage{}
	s.ConsecutiveErrors = 0
	s.Loop = LoopMemory{}
	s.StopReason = ""
}

func (s *State) pending(id string) (PendingCall, int) {
	for i, p := range s.Pending {
		if p.ID == id {
			return p, i
		}
	}
	return PendingCall{}, -1
}

// lastAssistantText returns the text of the newest assistant message.
func (s *State) lastAssistantText() string {
	for i := len(s.Messages) - 1; i >= 0; i-- {
		if m := &s.Messages[i]; m.Kind == KindAssistant {
			if t := m.Text(); t != "" {
				return t
			}
		}
		if s.Messages[i].Kind == KindUser && s.Messages[i].Origin == "" {
			break
		}
	}
	return ""
}

// unanswered returns the calls of the newest assistant message that have no
// tool result, in call order: after a crash or a failed hook the stored dialog
// can end that way, and the model's API refuses such a history.
func (s *State) unanswered() []llm.ToolUse {
	answered := map[string]bool{}
	for i := len(s.Messages) - 1; i >= 0; i-- {
		m := &s.Messages[i]
		switch m.Kind {
		case KindToolResult:
			if r := m.ToolResult(); r != nil {
				answered[r.ToolUseID] = true
			}
		case KindAssistant:
			var out []llm.ToolUse
			for _, c := range m.ToolUses() {
				if !answered[c.ID] {
					out = append(out, c)
				}
			}
			return out
		case KindUser, KindSummary, KindOperator:
			return nil
		}
	}
	return nil
}
