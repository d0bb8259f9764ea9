package store

import (
	"context"
	"database/sql"
	"time"
)

// FeedbackLog is a tenant's feedback on replies: reach it with
// Store.Tenant(id).Feedback().
type FeedbackLog struct{ scope }

// Feedback ratings.
const (
	FeedbackUp   = "up"
	FeedbackDown = "down"
)

// Feedback is an end user's rating of one reply of a dialog, with an
// optional comment. A reply has at most one; rating again replaces it.
type Feedback struct {
	MessageID string `gorm:"primaryKey"`
	TenantID  string
	DialogID  string
	BotID     string
	Rating    string
	Comment   string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TableName pins the table step 18 created.
func (Feedback) TableName() string { return "message_feedback" }

// putFeedbackSQL stores feedback only on an assistant message of the
// tenant's dialog, in one statement.
const putFeedbackSQL = `INSERT INTO message_feedback (message_id, tenant_id, dialog_id, bot_id, rating, comment, created_at, updated_at)
SELECT m.id, m.tenant_id, m.dialog_id, d.bot_id, @rating, @comment, @now, @now FROM messages m JOIN dialogs d ON d.id = m.dialog_id
WHERE m.id = @message AND m.tenant_id = @tenant AND m.dialog_id = @dialog AND m.kind = 'assistant'
ON CONFLICT (message_id) DO UPDATE SET rating = excluded.rating, comment = excluded.comment, updated_at = excluded.updated_at`

// Put stores f (its MessageID, TenantID, DialogID, Rating and
// Comment) on that reply, replacing earlier feedback on it; BotID and the
// times are filled in. A message that is not an assistant reply of the
// tenant's dialog is ErrNotFound.
func (fe FeedbackLog) Put(ctx context.Context, f *Feedback) error {
	s := fe.s
	f.TenantID = fe.tenant
	now := s.db.NowFunc()
	res := s.q(ctx).Exec(putFeedbackSQL, sql.Named("message", f.MessageID), sql.Named("tenant", f.TenantID), sql.Named("dialog", f.DialogID),
		sql.Named("rating", f.Rating), sql.Named("comment", f.Comment), sql.Named("now", now))
	if res.Error != nil {
		return wrap("put feedback", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("put feedback", ErrNotFound)
	}
	got, err := fe.List(ctx, f.DialogID)
	if err != nil {
		return err
	}
	for _, g := range got {
		if g.MessageID == f.MessageID {
			*f = g
		}
	}
	return nil
}

// List returns the feedback on the tenant's dialog, in the order
// it was first given.
func (fe FeedbackLog) List(ctx context.Context, dialogID string) ([]Feedback, error) {
	s, tenantID := fe.s, fe.tenant
	var out []Feedback
	err := s.q(ctx).Where("tenant_id = ? AND dialog_id = ?", tenantID, dialogID).Order("created_at, message_id").Find(&out).Error
	return out, wrap("list feedback", err)
}
