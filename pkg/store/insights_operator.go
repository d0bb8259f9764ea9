package store

import (
	"context"
	"time"
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
