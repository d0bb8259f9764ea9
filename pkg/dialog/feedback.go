package dialog

import (
	"context"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/webhook"
)

// Feedback ratings.
const (
	FeedbackUp   = store.FeedbackUp
	FeedbackDown = store.FeedbackDown
)

// MaxFeedbackComment caps a feedback comment, in characters.
const MaxFeedbackComment = 2000

// FeedbackInput is an end user's rating of one reply.
type FeedbackInput struct {
	Rating  string
	Comment string
}

// PutFeedback rates a reply of the dialog for whoever may chat in it (the
// widget's publishable key included, from its origins). Rating it again
// replaces the earlier rating. Only the dialog's own assistant messages
// take feedback; any other message id is not_found.
func (di Dialogs) PutFeedback(ctx context.Context, p *platform.Principal, tenant, dialog, message, origin string, in FeedbackInput) (apiclient.Feedback, error) {
	r := di.rt
	var ps problems
	if in.Rating != FeedbackUp && in.Rating != FeedbackDown {
		ps.add("/rating", "must be up or down")
	}
	if utf8.RuneCountInString(in.Comment) > MaxFeedbackComment {
		ps.add("/comment", "must be at most 2000 characters")
	}
	if err := ps.err(); err != nil {
		return apiclient.Feedback{}, err
	}
	d, err := r.turnDialog(ctx, p, tenant, dialog, origin)
	if err != nil {
		return apiclient.Feedback{}, err
	}
	f := store.Feedback{TenantID: d.TenantID, DialogID: d.ID, MessageID: message, Rating: in.Rating, Comment: in.Comment}
	// The event quotes the user's comment and names them: it carries its
	// dialog so that deleting the dialog or erasing the user deletes it.
	ev := platform.Event{TenantID: d.TenantID, BotID: d.BotID, DialogID: d.ID, Type: webhook.FeedbackCreated}
	err = r.svc.Webhooks().WithEvent(ctx, ev, func(st *store.Store) (any, error) {
		if err := st.Tenant(f.TenantID).Feedback().Put(ctx, &f); err != nil {
			return nil, err
		}
		return feedbackData{DialogID: d.ID, BotID: d.BotID, MessageID: f.MessageID, UserID: d.UserID, Rating: f.Rating, Comment: f.Comment}, nil
	})
	if err != nil {
		return apiclient.Feedback{}, r.storeErr(ctx, "put feedback", "message", err)
	}
	r.metrics.feedback.WithLabelValues(f.Rating).Inc()
	return feedbackView(&f), nil
}

// feedbackView is f as callers see it.
func feedbackView(f *store.Feedback) apiclient.Feedback {
	return apiclient.Feedback{MessageID: f.MessageID, Rating: f.Rating, Comment: f.Comment, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
}
