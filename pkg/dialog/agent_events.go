package dialog

import (
	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/llm"
)

// AgentStart opens a sub-run: the model called an agents tool, and the
// events until the matching AgentEnd with the same Agent are that agent's
// (NestedEvent). They reach clients as their apiclient wire types.
type AgentStart struct {
	// Agent is the path of agent tool names from the dialog's bot down,
	// "/"-separated: "research", or "research/facts" for an agent that
	// research called.
	Agent string
	// Bot is the called bot's slug.
	Bot string
	// CallID is the tool call that started the sub-run.
	CallID string
	// DialogID is the sub-run's own dialog, linked to the caller's.
	DialogID string
}

// AgentEnd closes a sub-run with how it ended; Text is its answer, which
// the calling model gets as the tool's result.
type AgentEnd struct {
	Agent      string
	CallID     string
	DialogID   string
	StopReason agent.StopReason
	Text       string
	Turns      int
	Usage      llm.Usage
}

// NestedEvent is an event of a sub-run: the loop event as the sub-run
// emitted it, with the path of the agent that emitted it.
type NestedEvent struct {
	Agent string
	Event agent.Event
}

// Type is the event's "type" field.
func (AgentStart) Type() string { return "agent_start" }

// Type is the event's "type" field.
func (AgentEnd) Type() string { return "agent_end" }

// Type is the nested event's own type: a client reading only "type" sees
// the sub-run's events as it would a dialog's, and tells them apart by
// their "agent" field.
func (e NestedEvent) Type() string { return e.Event.Type() }
