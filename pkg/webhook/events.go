package webhook

import (
	"encoding/json"
	"slices"
	"time"
)

// Event types. docs/events.md documents each one and its payload;
// configs/webhooks/<type>.schema.json is its JSON Schema.
const (
	DialogCreated          = "dialog.created"
	MessageCreated         = "message.created"
	DialogHandoffRequested = "dialog.handoff_requested"
	DialogHandoffTaken     = "dialog.handoff_taken"
	DialogHandoffReleased  = "dialog.handoff_released"
	DialogClosed           = "dialog.closed"
	ToolFailed             = "tool.failed"
	BotVersionPublished    = "bot.version_published"
	UsageQuotaReached      = "usage.quota_reached"
	// FeedbackCreated is an end user rating a reply (or changing their
	// rating).
	FeedbackCreated = "feedback.created"
	// MemberChanged is a member invited, added, accepting an invite,
	// changing role or removed.
	MemberChanged = "member.changed"
	// KnowledgeSourceReady is a knowledge source indexed, searchable now;
	// KnowledgeSourceFailed one whose indexing failed for good (its
	// retries spent). Their data is KnowledgeSource.
	KnowledgeSourceReady  = "knowledge.source_ready"
	KnowledgeSourceFailed = "knowledge.source_failed"
	// GuardrailFired is a guardrail rule that fired in a dialog: on the
	// user's message, the model's answer or a tool's output.
	GuardrailFired = "guardrail.fired"
	// Test is the event POST /webhooks/{id}/test sends to one endpoint. No
	// endpoint subscribes to it; it goes where it is asked to.
	Test = "webhook.test"
)

// Types lists the event types an endpoint may subscribe to, sorted.
var Types = []string{
	BotVersionPublished, DialogClosed, DialogCreated, DialogHandoffReleased, DialogHandoffRequested,
	DialogHandoffTaken, FeedbackCreated, GuardrailFired, KnowledgeSourceFailed, KnowledgeSourceReady, MemberChanged, MessageCreated,
	ToolFailed, UsageQuotaReached,
}

// KnowledgeSource is the data of the knowledge.source_ready and
// knowledge.source_failed events (docs/events.md): the source as the
// API shows it, and its base.
type KnowledgeSource struct {
	BaseID   string `json:"base_id"`
	Base     string `json:"base"` // the base's slug
	SourceID string `json:"source_id"`
	Kind     string `json:"kind"`
	Title    string `json:"title"`
	URL      string `json:"url,omitempty"`
	Filename string `json:"filename,omitempty"`
	Status   string `json:"status"`
	// Error says why indexing failed; only on knowledge.source_failed.
	Error  string `json:"error,omitempty"`
	Chunks int    `json:"chunks"`
	Pages  int    `json:"pages"`
	// IndexedAt is when the source was indexed; only on
	// knowledge.source_ready.
	IndexedAt *time.Time `json:"indexed_at,omitempty"`
}

// aboutDialog are the types whose event reports a fact of one dialog, and
// quotes it: erasing the dialog must delete the event too.
var aboutDialog = []string{DialogCreated, MessageCreated, DialogHandoffRequested, DialogHandoffTaken,
	DialogHandoffReleased, DialogClosed, ToolFailed, GuardrailFired}

// AboutDialog reports whether an event of type t is about one dialog.
func AboutDialog(t string) bool { return slices.Contains(aboutDialog, t) }

// Wildcard subscribes an endpoint to every event type, present and future.
const Wildcard = "*"

// Known reports whether t is a type an endpoint may subscribe to, or the
// wildcard.
func Known(t string) bool { return t == Wildcard || slices.Contains(Types, t) }

// Envelope is the body of every webhook: {type, timestamp, tenant, data}.
type Envelope struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	// Tenant is the tenant's slug, as the API's routes name it.
	Tenant string          `json:"tenant"`
	Data   json.RawMessage `json:"data"`
}

// Body encodes the envelope as it is signed and sent.
func Body(typ, tenant string, at time.Time, data any) ([]byte, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	return json.Marshal(Envelope{Type: typ, Timestamp: at.UTC().Truncate(time.Millisecond), Tenant: tenant, Data: raw})
}
