package dialog

import (
	"context"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/channel"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/webhook"
)

// The data of the webhook events the dialog runtime writes, as
// docs/events.md documents them; platform.Service.Webhooks().WithEvent wraps each
// in the envelope {type, timestamp, tenant, data}.

// dialogCreatedData is dialog.created's data.
type dialogCreatedData struct {
	Dialog apiclient.Dialog `json:"dialog"`
	// Bot is the bot's slug.
	Bot string `json:"bot"`
}

// toolErrorExcerpt caps the tool output a tool.failed event carries.
const toolErrorExcerpt = 1024

// toolFailedData is tool.failed's data: a call whose result is an error,
// as the model saw it (secrets never reach tool results).
type toolFailedData struct {
	DialogID string `json:"dialog_id"`
	BotID    string `json:"bot_id"`
	CallID   string `json:"call_id"`
	Tool     string `json:"tool"`
	// Kind is the tool's kind (http, mcp, native, ...); Status the HTTP
	// status of an HTTP tool's answer, when it had one.
	Kind   string `json:"kind,omitempty"`
	Status int    `json:"status,omitempty"`
	// Error is the start of the result the model was given.
	Error      string `json:"error"`
	DurationMS int64  `json:"duration_ms"`
}

// excerpt returns s cut to at most n bytes on a rune boundary.
func excerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// messageCreatedData is message.created's data.
type messageCreatedData struct {
	DialogID string `json:"dialog_id"`
	BotID    string `json:"bot_id"`
	// ParentDialogID marks a sub-run's message (an agent called as a
	// tool) with the dialog that called it.
	ParentDialogID string            `json:"parent_dialog_id,omitempty"`
	Message        apiclient.Message `json:"message"`
	// Channel and External are set when the dialog came in through a
	// channel: the tenant's backend, having sent async, routes the reply
	// to its own conversation by them.
	Channel  *hookChannel  `json:"channel,omitempty"`
	External *hookExternal `json:"external,omitempty"`
}

// hookChannel names the channel a dialog came through.
type hookChannel struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
}

// hookExternal is the channel platform's conversation and user ids.
type hookExternal struct {
	ConversationID string `json:"conversation_id"`
	UserID         string `json:"user_id,omitempty"`
}

// channelKinds are the dialog channels that come through an inbound
// channel (pkg/channel's kinds), whose dialogs map to a conversation.
var channelKinds = map[string]bool{channel.KindWebhook: true, channel.KindTelegram: true, channel.KindSlack: true}

// withExternal adds the channel and external ids to data when d came
// through a channel, read in the event's transaction.
func withExternal(ctx context.Context, st *store.Store, d *store.Dialog, data *messageCreatedData) error {
	if !channelKinds[d.Channel] {
		return nil
	}
	conv, err := st.Tenant(d.TenantID).Channels().ConversationOf(ctx, d.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	data.Channel = &hookChannel{ID: conv.ChannelID, Kind: d.Channel}
	data.External = &hookExternal{ConversationID: conv.ExternalID, UserID: conv.UserID}
	return nil
}

// announced says whether a message of this kind is a message.created:
// what the user, the bot or an operator said, not the tool traffic or
// notes between.
func announced(kind string) bool {
	return kind == string(agent.KindUser) || kind == string(agent.KindAssistant) || kind == string(agent.KindOperator)
}

// writeMessage runs write, which stores row (new or completed), and
// writes message.created in the same commit when the run's tenant takes
// it. A run learns whether it does as it starts (hookMessages); without
// such an endpoint write runs as it would without webhooks.
func (r *Runtime) writeMessage(ctx context.Context, hooked bool, d *store.Dialog, row *store.Message, write func(st *store.Store) error) error {
	if !hooked || !announced(row.Kind) {
		return write(r.store)
	}
	ev := platform.Event{TenantID: d.TenantID, BotID: d.BotID, DialogID: d.ID, Type: webhook.MessageCreated}
	return r.svc.Webhooks().WithEvent(ctx, ev, func(st *store.Store) (any, error) {
		if err := write(st); err != nil {
			return nil, err
		}
		data := messageCreatedData{DialogID: d.ID, BotID: d.BotID, ParentDialogID: d.ParentDialogID, Message: WireMessage(messageView(row))}
		if g := guardFrom(ctx); g != nil && g.g.Masks(botconfig.PIIInWebhooks) && !g.g.MasksText() {
			// Stored as said, sent masked.
			data.Message.Text = g.g.PII.Redact(data.Message.Text)
			data.Message.Content = json.RawMessage(g.g.PII.Redact(string(data.Message.Content)))
		}
		return data, withExternal(ctx, st, d, &data)
	})
}

// handoffRequestedData is dialog.handoff_requested's data.
type handoffRequestedData struct {
	DialogID string `json:"dialog_id"`
	BotID    string `json:"bot_id"`
	// Reason is why the model handed off (handoff_to_human's reason).
	Reason string `json:"reason,omitempty"`
}

// handoffReason is the reason the newest handoff_to_human call gave.
func handoffReason(msgs []agent.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, use := range msgs[i].ToolUses() {
			if use.Name != "handoff_to_human" {
				continue
			}
			var args struct {
				Reason string `json:"reason"`
			}
			_ = json.Unmarshal(use.Arguments, &args) // arguments the tool accepted; none is no reason
			return args.Reason
		}
	}
	return ""
}

// guardrailFiredData is guardrail.fired's data: a rule of the bot's
// guardrails that fired (guardrails.go); Tool names the tool whose output
// was flagged.
type guardrailFiredData struct {
	DialogID string `json:"dialog_id"`
	BotID    string `json:"bot_id"`
	Rule     string `json:"rule"`
	Where    string `json:"where"`
	Action   string `json:"action"`
	Tool     string `json:"tool,omitempty"`
}

// feedbackData is feedback.created's data.
type feedbackData struct {
	DialogID  string `json:"dialog_id"`
	BotID     string `json:"bot_id"`
	MessageID string `json:"message_id"`
	UserID    string `json:"user_id,omitempty"`
	Rating    string `json:"rating"`
	Comment   string `json:"comment"`
}

// handoffTakenData is dialog.handoff_taken's and dialog.handoff_released's
// data: operator is the name the end user saw.
type handoffTakenData struct {
	DialogID string `json:"dialog_id"`
	BotID    string `json:"bot_id"`
	Operator string `json:"operator"`
}

// dialogClosedData is dialog.closed's data: closed_by is "bot" (its
// end_dialog tool) or "person" (an operator or the API).
type dialogClosedData struct {
	DialogID string `json:"dialog_id"`
	BotID    string `json:"bot_id"`
	Reason   string `json:"reason"`
	ClosedBy string `json:"closed_by"`
	// Outcome is how the dialog ended (docs/insights.md); null for
	// previews and sub-runs, which get none. Rating is the end user's
	// rating of the dialog so far, 0 when none.
	Outcome *string `json:"outcome"`
	Rating  int     `json:"rating"`
}

// nullable is s, or nil when s is "".
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
