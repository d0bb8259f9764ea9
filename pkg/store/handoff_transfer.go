package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Transfer gives the tenant's handed-off dialog to another member, to:
// one conditional UPDATE, taking a dialog that waits, or one that from
// (the member who hands it on) or to holds already. A dialog a third
// operator holds is ErrConflict, one not handed off ErrInactive, one of
// another tenant ErrNotFound.
func (ha Handoffs) Transfer(ctx context.Context, dialogID, from, to, toName string, now time.Time) (*Handoff, error) {
	s, tenantID := ha.s, ha.tenant
	rows, err := s.q(ctx).Raw(`UPDATE dialog_handoffs SET assignee_id = @to, assignee_name = @name, assigned_at = @now
WHERE tenant_id = @tenant AND dialog_id = @dialog AND assignee_id IN ('', @from, @to)
  AND EXISTS (SELECT 1 FROM dialogs d WHERE d.tenant_id = @tenant AND d.id = @dialog AND d.status = 'handoff')
RETURNING `+handoffColumns, sql.Named("tenant", tenantID), sql.Named("dialog", dialogID),
		sql.Named("from", from), sql.Named("to", to), sql.Named("name", toName), sql.Named("now", now.UTC())).Rows()
	if err != nil {
		return nil, wrap("transfer handoff", err)
	}
	h, err := oneHandoff(rows)
	if !errors.Is(err, ErrNotFound) {
		return h, wrap("transfer handoff", err)
	}
	return nil, wrap("transfer handoff", ha.whyNot(ctx, dialogID))
}
