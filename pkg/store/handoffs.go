package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// Handoffs are a tenant's dialogs handed to people: reach them with
// Store.Tenant(id).Handoffs().
type Handoffs struct{ scope }

// Handoff is a dialog handed to a person: since when it waits and who
// took it.
type Handoff struct {
	TenantID, DialogID string
	RequestedAt        time.Time
	// AssigneeID and AssigneeName are the operator who took the dialog;
	// "" while it waits.
	AssigneeID, AssigneeName string
	AssignedAt               *time.Time
}

// Waiting says no operator took the handoff yet.
func (h *Handoff) Waiting() bool { return h.AssigneeID == "" }

// HandedOff is a dialog of the inbox with its handoff.
type HandedOff struct {
	Dialog  Dialog
	Handoff Handoff
}

// Request records that the tenant's dialog waits for a person from
// now on; a handoff still recorded (an earlier one never released) starts
// over, unassigned. Call it in the transaction that hands the dialog off.
func (ha Handoffs) Request(ctx context.Context, dialogID string, at time.Time) error {
	s, tenantID := ha.s, ha.tenant
	err := s.q(ctx).Exec(`INSERT INTO dialog_handoffs (dialog_id, tenant_id, requested_at, assignee_id, assignee_name)
SELECT id, tenant_id, ?, '', '' FROM dialogs WHERE tenant_id = ? AND id = ?
ON CONFLICT (dialog_id) DO UPDATE SET requested_at = excluded.requested_at, assignee_id = '', assignee_name = '', assigned_at = NULL`,
		at.UTC(), tenantID, dialogID).Error
	if err != nil {
		return wrap("request handoff", err)
	}
	// The dialog keeps that it was handed off after it goes back to the
	// bot: its outcome is handed_off all the same (Insights).
	err = s.q(ctx).Model(&Dialog{}).Where("tenant_id = ? AND id = ?", tenantID, dialogID).UpdateColumn("handed_off", true).Error
	return wrap("request handoff", err)
}

// handoffColumns are Handoff's columns in scanHandoff's order.
// Unqualified, they are what an UPDATE or DELETE returns (SQLite's
// RETURNING knows no table alias); queries that join read them from h.
const handoffColumns = "tenant_id, dialog_id, requested_at, assignee_id, assignee_name, assigned_at"

func handoffDest(h *Handoff) []any {
	return []any{&h.TenantID, &h.DialogID, &h.RequestedAt, &h.AssigneeID, &h.AssigneeName, &h.AssignedAt}
}

// Assign gives the tenant's handed-off dialog to an operator. It is
// one conditional UPDATE, so of two operators taking the same dialog at
// once exactly one wins; the other gets ErrConflict (taking a dialog one
// holds already is fine). A dialog that is not handed off is ErrInactive,
// one of another tenant ErrNotFound.
func (ha Handoffs) Assign(ctx context.Context, dialogID, assigneeID, assigneeName string, now time.Time) (*Handoff, error) {
	s, tenantID := ha.s, ha.tenant
	rows, err := s.q(ctx).Raw(`UPDATE dialog_handoffs SET assignee_id = @assignee, assignee_name = @name, assigned_at = @now
WHERE tenant_id = @tenant AND dialog_id = @dialog AND (assignee_id = '' OR assignee_id = @assignee)
  AND EXISTS (SELECT 1 FROM dialogs d WHERE d.tenant_id = @tenant AND d.id = @dialog AND d.status = 'handoff')
RETURNING `+handoffColumns, sql.Named("tenant", tenantID), sql.Named("dialog", dialogID),
		sql.Named("assignee", assigneeID), sql.Named("name", assigneeName), sql.Named("now", now.UTC())).Rows()
	if err != nil {
		return nil, wrap("assign handoff", err)
	}
	h, err := oneHandoff(rows)
	if !errors.Is(err, ErrNotFound) {
		return h, wrap("assign handoff", err)
	}
	return nil, wrap("assign handoff", ha.whyNot(ctx, dialogID))
}

// whyNot explains why a handoff write matched no row: no such
// dialog (ErrNotFound), one not handed off (ErrInactive), or one another
// operator holds (ErrConflict).
func (ha Handoffs) whyNot(ctx context.Context, dialogID string) error {
	s, tenantID := ha.s, ha.tenant
	d, err := s.Tenant(tenantID).Dialogs().Get(ctx, dialogID)
	switch {
	case err != nil:
		return err
	case d.Status != DialogHandoff:
		return ErrInactive
	}
	return ErrConflict
}

func oneHandoff(rows *sql.Rows) (*Handoff, error) {
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return nil, ErrNotFound
	}
	var h Handoff
	if err := rows.Scan(handoffDest(&h)...); err != nil {
		return nil, err
	}
	return &h, rows.Err()
}

// Get returns the handoff of the tenant's dialog while it is
// handed off; otherwise ErrInactive (ErrNotFound for no such dialog).
func (ha Handoffs) Get(ctx context.Context, dialogID string) (*Handoff, error) {
	s, tenantID := ha.s, ha.tenant
	rows, err := s.q(ctx).Raw(`SELECT `+prefixed("h.", handoffColumns)+` FROM dialog_handoffs h JOIN dialogs d ON d.id = h.dialog_id
WHERE h.tenant_id = ? AND h.dialog_id = ? AND d.tenant_id = ? AND d.status = 'handoff'`, tenantID, dialogID, tenantID).Rows()
	if err != nil {
		return nil, wrap("get handoff", err)
	}
	h, err := oneHandoff(rows)
	if !errors.Is(err, ErrNotFound) {
		return h, wrap("get handoff", err)
	}
	if _, err := s.Tenant(tenantID).Dialogs().Get(ctx, dialogID); err != nil {
		return nil, wrap("get handoff", err)
	}
	return nil, wrap("get handoff", ErrInactive)
}

// GetWithDialog returns the tenant's dialog and, while it is handed
// off, its handoff (nil otherwise: the bot answers, or the dialog was
// handed off before handoffs were recorded). It is one statement, so the
// two agree even while a release commits: never a handed-off dialog whose
// handoff is already gone. No such dialog is ErrNotFound.
func (ha Handoffs) GetWithDialog(ctx context.Context, dialogID string) (*Dialog, *Handoff, error) {
	s, tenantID := ha.s, ha.tenant
	rows, err := s.q(ctx).Raw(`SELECT `+prefixed("d.", dialogColumns)+`,
  COALESCE(h.tenant_id, ''), COALESCE(h.dialog_id, ''), h.requested_at,
  COALESCE(h.assignee_id, ''), COALESCE(h.assignee_name, ''), h.assigned_at
FROM dialogs d LEFT JOIN dialog_handoffs h ON h.dialog_id = d.id AND h.tenant_id = d.tenant_id AND d.status = 'handoff'
WHERE d.tenant_id = ? AND d.id = ?`, tenantID, dialogID).Rows()
	if err != nil {
		return nil, nil, wrap("get dialog handoff", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, nil, wrap("get dialog handoff", err)
		}
		return nil, nil, wrap("get dialog handoff", ErrNotFound)
	}
	var h Handoff
	var requestedAt *time.Time // NULL: no handoff joined
	d, err := scanDialog(rows, &h.TenantID, &h.DialogID, &requestedAt, &h.AssigneeID, &h.AssigneeName, &h.AssignedAt)
	if err != nil {
		return nil, nil, wrap("get dialog handoff", err)
	}
	if requestedAt == nil {
		return d, nil, nil
	}
	h.RequestedAt = *requestedAt
	return d, &h, nil
}

// Release gives the tenant's handed-off dialog back to the bot: it
// is active again and its handoff is forgotten, in one commit. It returns
// the handoff as it was; a dialog not handed off is ErrInactive.
func (ha Handoffs) Release(ctx context.Context, dialogID string) (*Handoff, error) {
	s, tenantID := ha.s, ha.tenant
	var h *Handoff
	err := s.Tx(ctx, func(tx *Store) error {
		res := tx.q(ctx).Model(&Dialog{}).Where("tenant_id = ? AND id = ? AND status = ?", tenantID, dialogID, DialogHandoff).
			Updates(map[string]any{"status": DialogActive, "updated_at": s.db.NowFunc()})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return tx.Tenant(tenantID).Handoffs().whyNot(ctx, dialogID)
		}
		rows, err := tx.q(ctx).Raw(`DELETE FROM dialog_handoffs WHERE tenant_id = ? AND dialog_id = ? RETURNING `+handoffColumns,
			tenantID, dialogID).Rows()
		if err != nil {
			return err
		}
		if h, err = oneHandoff(rows); errors.Is(err, ErrNotFound) {
			h, err = &Handoff{TenantID: tenantID, DialogID: dialogID}, nil // handed off before handoffs were recorded
		}
		return err
	})
	if err != nil {
		return nil, wrap("release handoff", err)
	}
	return h, nil
}

// MaxInbox caps how many handed-off dialogs Handoffs.List returns.
const MaxInbox = 200

// InboxCounts counts a tenant's handed-off dialogs.
type InboxCounts struct {
	Waiting, Taken int64
}

// List returns the tenant's handed-off dialogs, the longest
// waiting first (at most MaxInbox), and how many wait and how many are
// taken in all.
func (ha Handoffs) List(ctx context.Context) ([]HandedOff, InboxCounts, error) {
	s, tenantID := ha.s, ha.tenant
	var counts InboxCounts
	rows, err := s.q(ctx).Raw(`SELECT `+prefixed("d.", dialogColumns)+`, `+prefixed("h.", handoffColumns)+`
FROM dialog_handoffs h JOIN dialogs d ON d.id = h.dialog_id
WHERE h.tenant_id = ? AND d.tenant_id = ? AND d.status = 'handoff'
ORDER BY h.requested_at, h.dialog_id LIMIT ?`, tenantID, tenantID, MaxInbox).Rows()
	if err != nil {
		return nil, counts, wrap("list handoffs", err)
	}
	defer rows.Close()
	var out []HandedOff
	for rows.Next() {
		var h Handoff
		d, err := scanDialog(rows, handoffDest(&h)...)
		if err != nil {
			return nil, counts, wrap("list handoffs", err)
		}
		out = append(out, HandedOff{Dialog: *d, Handoff: h})
	}
	if err := rows.Err(); err != nil {
		return nil, counts, wrap("list handoffs", err)
	}
	err = s.q(ctx).Raw(`SELECT COALESCE(SUM(CASE WHEN h.assignee_id = '' THEN 1 ELSE 0 END), 0) AS waiting,
  COALESCE(SUM(CASE WHEN h.assignee_id <> '' THEN 1 ELSE 0 END), 0) AS taken
FROM dialog_handoffs h JOIN dialogs d ON d.id = h.dialog_id
WHERE h.tenant_id = ? AND d.tenant_id = ? AND d.status = 'handoff'`, tenantID, tenantID).Row().Scan(&counts.Waiting, &counts.Taken)
	if err != nil {
		return nil, counts, wrap("count handoffs", err)
	}
	return out, counts, nil
}

// prefixed qualifies each of a comma-separated column list with p.
func prefixed(p, columns string) string {
	return p + strings.ReplaceAll(columns, ", ", ", "+p)
}
