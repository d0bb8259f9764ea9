package store

import (
	"context"
	"encoding/json"
)

// HandoffGlimpse is what the inbox list shows of a handed-off dialog
// besides its handoff: why the bot handed it off and its newest message.
type HandoffGlimpse struct {
	// Reason and Summary are the newest handoff_to_human call's arguments.
	Reason, Summary string
	// LastKind and LastText are the newest message with text: who said it
	// (user, assistant or operator) and what.
	LastKind, LastText string
}

// glimpseKinds are the messages a glimpse quotes: what someone said,
// not the loop's events or tool results.
var glimpseKinds = []string{"user", "assistant", "operator"}

// Glimpses returns the glimpse of each of the tenant's dialogs ids (two
// statements however many), keyed by dialog id; a dialog with neither a
// handoff call nor a message has none.
func (ha Handoffs) Glimpses(ctx context.Context, ids []string) (map[string]HandoffGlimpse, error) {
	s, tenantID := ha.s, ha.tenant
	out := make(map[string]HandoffGlimpse, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var calls []ToolCall
	err := s.q(ctx).Where("tenant_id = ? AND dialog_id IN ? AND name = ?", tenantID, ids, "handoff_to_human").
		Order("created_at, call_id").Find(&calls).Error
	if err != nil {
		return nil, wrap("handoff glimpses: calls", err)
	}
	for _, c := range calls { // oldest first: the newest call wins
		var args struct {
			Reason  string `json:"reason"`
			Summary string `json:"summary"`
		}
		_ = json.Unmarshal([]byte(c.Arguments), &args) // arguments the tool accepted; none is no reason
		g := out[c.DialogID]
		g.Reason, g.Summary = args.Reason, args.Summary
		out[c.DialogID] = g
	}
	var last []Message
	err = s.q(ctx).Select("dialog_id, kind, text").
		Where(`tenant_id = ? AND dialog_id IN ? AND kind IN ? AND text <> ''
  AND seq = (SELECT MAX(x.seq) FROM messages x WHERE x.tenant_id = messages.tenant_id AND x.dialog_id = messages.dialog_id AND x.kind IN ? AND x.text <> '')`,
			tenantID, ids, glimpseKinds, glimpseKinds).Find(&last).Error
	if err != nil {
		return nil, wrap("handoff glimpses: messages", err)
	}
	for _, m := range last {
		g := out[m.DialogID]
		g.LastKind, g.LastText = m.Kind, m.Text
		out[m.DialogID] = g
	}
	return out, nil
}
