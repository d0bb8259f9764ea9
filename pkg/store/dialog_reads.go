package store

import (
	"context"
	"time"

	"gorm.io/gorm/clause"
)

// DialogReads are how far each side of a tenant's dialogs has read them
// (the read receipts of a handoff): reach them with
// Store.Tenant(id).DialogReads(). They go with their dialog (dialogTables).
type DialogReads struct{ scope }

// The sides of a dialog that read it.
const (
	ReadByUser     = "user"
	ReadByOperator = "operator"
)

// DialogRead is one side's read mark: the seq of the newest message it
// has seen, and when.
type DialogRead struct {
	TenantID string
	DialogID string `gorm:"primaryKey"`
	Side     string `gorm:"primaryKey"`
	Seq      int64
	ReadAt   time.Time
}

// TableName implements gorm's Tabler.
func (DialogRead) TableName() string { return "dialog_reads" }

// Mark records that side has read the tenant's dialog up to seq at at; a
// seq past the dialog's newest message marks that one. A mark never moves
// back: an older seq (a tab left open, a late request) changes nothing
// and answers false; a newer one answers true.
func (dr DialogReads) Mark(ctx context.Context, dialogID, side string, seq int64, at time.Time) (bool, error) {
	s := dr.s
	if _, err := s.Tenant(dr.tenant).Dialogs().Get(ctx, dialogID); err != nil {
		return false, wrap("mark read", err)
	}
	var newest []int64
	err := s.q(ctx).Model(&Message{}).Where("tenant_id = ? AND dialog_id = ?", dr.tenant, dialogID).
		Order("seq DESC").Limit(1).Pluck("seq", &newest).Error
	if err != nil || len(newest) == 0 {
		return false, wrap("mark read", err)
	}
	seq = min(seq, newest[0])
	res := s.w(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "dialog_id"}, {Name: "side"}},
		DoUpdates: clause.Assignments(map[string]any{"seq": clause.Expr{SQL: "excluded.seq"}, "read_at": clause.Expr{SQL: "excluded.read_at"}}),
		Where:     clause.Where{Exprs: []clause.Expression{clause.Expr{SQL: "dialog_reads.seq < excluded.seq"}}},
	}).Create(&DialogRead{TenantID: dr.tenant, DialogID: dialogID, Side: side, Seq: seq, ReadAt: at.UTC()})
	return res.RowsAffected > 0, wrap("mark read", res.Error)
}

// Of returns the tenant's dialog's read marks by side; a side that has
// read nothing yet has none.
func (dr DialogReads) Of(ctx context.Context, dialogID string) (map[string]DialogRead, error) {
	var rows []DialogRead
	err := dr.s.q(ctx).Where("tenant_id = ? AND dialog_id = ?", dr.tenant, dialogID).Find(&rows).Error
	out := make(map[string]DialogRead, len(rows))
	for _, r := range rows {
		out[r.Side] = r
	}
	return out, wrap("read marks", err)
}
