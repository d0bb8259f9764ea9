package store

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// FirstMessageSince is the id of the dialog's first message of kind
// written at or after since (by seq), "" when there is none. Analytics
// time an operator's first answer to a handoff with it: of several
// operator messages written at once, only the first is the answer.
func (in Insights) FirstMessageSince(ctx context.Context, dialogID, kind string, since time.Time) (string, error) {
	var ids []string
	err := in.s.q(ctx).Model(&Message{}).Where("tenant_id = ? AND dialog_id = ? AND kind = ? AND created_at >= ?",
		in.tenant, dialogID, kind, since.UTC()).Order("seq").Limit(1).Pluck("id", &ids).Error
	if err != nil || len(ids) == 0 {
		return "", wrap("first message since", err)
	}
	return ids[0], nil
}

// Unanswered is when the end user wrote the first message an operator's
// message of seq has to answer: the dialog's first user message written
// after since (the handoff: the message that asked for a person is the
// first response's) and after the newest operator message before seq.
// ok is false when the operator's message answers none (the user wrote
// nothing since). Analytics time each operator answer with it.
func (in Insights) Unanswered(ctx context.Context, dialogID string, seq int64, since time.Time) (at time.Time, ok bool, err error) {
	messages := func() *gorm.DB {
		return in.s.q(ctx).Model(&Message{}).Where("tenant_id = ? AND dialog_id = ?", in.tenant, dialogID)
	}
	var last []int64
	err = messages().Where("kind = ? AND seq < ?", "operator", seq).Order("seq DESC").Limit(1).Pluck("seq", &last).Error
	if err != nil {
		return at, false, wrap("unanswered message", err)
	}
	after := int64(0)
	if len(last) > 0 {
		after = last[0]
	}
	var rows []Message
	err = messages().Select("created_at").Where("kind = ? AND seq > ? AND seq < ? AND created_at > ?", "user", after, seq, since.UTC()).
		Order("seq").Limit(1).Find(&rows).Error
	if err != nil || len(rows) == 0 {
		return at, false, wrap("unanswered message", err)
	}
	return rows[0].CreatedAt, true, nil
}
