package dialog

import (
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/knowledge/cite"
)

// The wire forms of a dialog and its messages: what the API answers
// (docs/api.md) and what webhook events carry (docs/webhooks.md) are the
// same apiclient types, converted here and nowhere else.

// WireDialog is d as the API and webhook events show it.
func WireDialog(d Dialog) apiclient.Dialog {
	out := apiclient.Dialog{ID: d.ID, BotID: d.BotID, Version: d.Version, Preview: d.Preview, UserID: d.UserID,
		Channel: d.Channel, Context: d.Context, Status: d.Status, ClosedReason: d.ClosedReason, Greeting: d.Greeting,
		ParentDialogID: d.ParentDialogID, ParentCallID: d.ParentCallID,
		Pending: wireAll(d.Pending, WirePending), OutcomeReason: d.OutcomeReason, OutcomeAt: d.OutcomeAt, Rating: d.Rating,
		Labels: d.Labels, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
	if d.Outcome != "" {
		out.Outcome = &d.Outcome
	}
	if out.Labels == nil {
		out.Labels = []string{}
	}
	if s := d.Summary; s != nil {
		out.Summary = &apiclient.DialogSummary{Snippet: s.Snippet, Messages: s.Messages, ToolErrors: s.ToolErrors,
			FeedbackUp: s.FeedbackUp, FeedbackDown: s.FeedbackDown}
	}
	return out
}

// WirePending is a call a paused dialog waits for, on the wire.
func WirePending(p PendingCall) apiclient.PendingCall {
	return apiclient.PendingCall{ID: p.ID, Name: p.Name, Arguments: p.Arguments, Kind: p.Kind}
}

// WireMessage is m as the API and webhook events show it.
func WireMessage(m Message) apiclient.Message {
	out := apiclient.Message{ID: m.ID, Seq: m.Seq, Kind: m.Kind, Role: m.Role, Content: m.Content, Text: m.Text,
		Model: m.Model, Provider: m.Provider, Version: m.Version, Status: m.Status, Author: m.Author, CreatedAt: m.CreatedAt}
	if m.Usage != nil {
		out.Usage = &apiclient.Usage{InputTokens: m.Usage.InputTokens, OutputTokens: m.Usage.OutputTokens}
	}
	for _, c := range m.Citations {
		out.Citations = append(out.Citations, WireCitation(c))
	}
	return out
}

// WireCitation is a passage a message cites, on the wire.
func WireCitation(c cite.Citation) apiclient.Citation {
	return apiclient.Citation{N: c.N, Source: c.Source, Title: c.Title, URL: c.URL, Locator: c.Locator}
}

// wireAll converts each of in.
func wireAll[S, T any](in []S, f func(S) T) []T {
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
