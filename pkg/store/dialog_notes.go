package store

import (
	"context"
	"time"
)

// DialogNotes are the internal notes a tenant's members keep on its
// dialogs: reach them with Store.Tenant(id).DialogNotes(). The end user
// never sees them; they go with their dialog (dialogTables).
type DialogNotes struct{ scope }

// PrefixDialogNote starts the id of a dialog note.
const PrefixDialogNote = "note"

// MaxDialogNotes caps how many notes DialogNotes.List returns.
const MaxDialogNotes = 500

// DialogNote is one member's note on one dialog.
type DialogNote struct {
	ID       string `gorm:"primaryKey"`
	TenantID string
	DialogID string
	// AuthorID is who wrote it (a user id, key:<id> or platform);
	// AuthorName is the name the console shows.
	AuthorID, AuthorName string
	Text                 string
	CreatedAt            time.Time
}

// TableName implements gorm's Tabler.
func (DialogNote) TableName() string { return "dialog_notes" }

// Add stores n on the tenant's dialog n.DialogID (ErrNotFound when the
// tenant has no such dialog); n gets its id, and its tenant is the
// handle's whatever n said.
func (dn DialogNotes) Add(ctx context.Context, n *DialogNote) error {
	s := dn.s
	n.TenantID = dn.tenant
	if _, err := s.Tenant(dn.tenant).Dialogs().Get(ctx, n.DialogID); err != nil {
		return wrap("add dialog note", err)
	}
	n.ID = NewID(PrefixDialogNote)
	n.CreatedAt = n.CreatedAt.UTC()
	return wrap("add dialog note", s.q(ctx).Create(n).Error)
}

// List returns the notes on the tenant's dialog, oldest first (at most
// MaxDialogNotes); none for a dialog of another tenant.
func (dn DialogNotes) List(ctx context.Context, dialogID string) ([]DialogNote, error) {
	var out []DialogNote
	err := dn.s.q(ctx).Where("tenant_id = ? AND dialog_id = ?", dn.tenant, dialogID).
		Order("created_at, id").Limit(MaxDialogNotes).Find(&out).Error
	return out, wrap("list dialog notes", err)
}
