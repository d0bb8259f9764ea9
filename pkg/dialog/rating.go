package dialog

import (
	"context"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// RatingInput is an end user's rating of a whole dialog: Rating 1 to 5,
// or Thumbs "up" (5) or "down" (1).
type RatingInput struct {
	Rating  int
	Thumbs  string
	Comment string
}

// Rate stores the end user's rating of the dialog, for whoever may
// chat in it (the widget asks when a dialog ends). Rating again replaces
// it. A dialog with an outcome gets it computed again: a rating of 1 or
// 2 makes it failed (docs/insights.md).
func (di Dialogs) Rate(ctx context.Context, p *platform.Principal, tenant, dialog, origin string, in RatingInput) (Dialog, error) {
	r := di.rt
	var ps problems
	rating := in.Rating
	switch {
	case in.Thumbs != "" && rating != 0:
		ps.add("/thumbs", "give rating or thumbs, not both")
	case in.Thumbs == FeedbackUp:
		rating = 5
	case in.Thumbs == FeedbackDown:
		rating = 1
	case in.Thumbs != "":
		ps.add("/thumbs", "must be up or down")
	case rating < 1 || rating > 5:
		ps.add("/rating", "must be 1 to 5")
	}
	if utf8.RuneCountInString(in.Comment) > MaxFeedbackComment {
		ps.add("/comment", "must be at most 2000 characters")
	}
	if err := ps.err(); err != nil {
		return Dialog{}, err
	}
	d, err := r.turnDialog(ctx, p, tenant, dialog, origin)
	if err != nil {
		return Dialog{}, err
	}
	comment := strings.TrimSpace(in.Comment)
	d, err = r.Insights().settle(ctx, r.store, d.TenantID, d.ID, false, func(v *store.Verdict) { v.Rating, v.RatingComment = rating, comment })
	if err != nil {
		return Dialog{}, r.storeErr(ctx, "rate dialog", "dialog", err)
	}
	r.metrics.feedback.WithLabelValues("dialog").Inc()
	return r.Dialogs().view(ctx, d)
}

// MaxLabels and MaxLabelChars bound a dialog's labels.
const (
	MaxLabels     = 20
	MaxLabelChars = 50
)

// SetLabels replaces the tenant's labels on a dialog, for those who
// operate its dialogs. Labels are trimmed, unique, at most MaxLabels of
// at most MaxLabelChars characters.
func (di Dialogs) SetLabels(ctx context.Context, p *platform.Principal, tenant, dialog string, labels []string) (Dialog, error) {
	r := di.rt
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActOperate)
	if err != nil {
		return Dialog{}, err
	}
	var ps problems
	if len(labels) > MaxLabels {
		ps.add("/labels", "may hold at most 20 labels")
	}
	clean := []string{}
	for i, l := range labels {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
			ps.add("/labels/"+strconv.Itoa(i), "must not be empty")
		case utf8.RuneCountInString(l) > MaxLabelChars:
			ps.add("/labels/"+strconv.Itoa(i), "must have at most 50 characters")
		}
		if !contains(clean, l) {
			clean = append(clean, l)
		}
	}
	if err := ps.err(); err != nil {
		return Dialog{}, err
	}
	if err := r.store.Tenant(tenantID).Insights().SetLabels(ctx, dialog, clean); err != nil {
		return Dialog{}, r.storeErr(ctx, "set labels", "dialog", err)
	}
	d, err := r.store.Tenant(tenantID).Dialogs().Get(ctx, dialog)
	if err != nil {
		return Dialog{}, r.storeErr(ctx, "set labels", "dialog", err)
	}
	return r.Dialogs().view(ctx, d)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// view is d as callers see it.
func (di Dialogs) view(ctx context.Context, d *store.Dialog) (Dialog, error) {
	r := di.rt
	out, err := dialogView(d)
	if err != nil {
		return Dialog{}, r.internal(ctx, "dialog view", err)
	}
	return out, nil
}
