package store

import (
	"context"
	"database/sql"
	"time"
)

// Id prefixes of the dialog subject (see ids.go for the others).
const (
	PrefixDialog  = "dlg"
	PrefixMessage = "msg"
)

// Dialog statuses.
const (
	DialogActive  = "active"  // the bot answers
	DialogPaused  = "paused"  // a run waits for client tool results or a confirmation
	DialogHandoff = "handoff" // a human took over; messages are stored, not answered
	DialogClosed  = "closed"  // the conversation is over
)

// Dialog is one conversation between a user and a bot version.
type Dialog struct {
	ID       string `gorm:"primaryKey"`
	TenantID string
	BotID    string
	// VersionNumber is the bot version the dialog runs, pinned at creation
	// so publishing a new version never changes a conversation midway.
	VersionNumber int
	// Preview marks a dialog on a draft version, started by an editor.
	Preview bool
	UserID  string
	Channel string
	// Context is the JSON object of the dialog's context variables.
	Context string
	Status  string
	// State is the agent loop's state without its messages (those are rows
	// of their own), kept so a paused run can resume anywhere.
	State     string
	LastSeq   int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// DialogFilter narrows ListDialogs; empty fields match everything.
type DialogFilter struct {
	BotID  string
	Status string
}

// CreateDialog inserts d as active, giving it an id when it has none.
func (s *Store) CreateDialog(ctx context.Context, d *Dialog) error {
	if d.ID == "" {
		d.ID = NewID(PrefixDialog)
	}
	if d.Status == "" {
		d.Status = DialogActive
	}
	if d.Context == "" {
		d.Context = "{}"
	}
	return wrap("create dialog", s.w(ctx).Create(d).Error)
}

// GetDialog finds the tenant's dialog by id. Every turn reads its dialog,
// so the row is scanned by hand rather than through gorm's reflection.
func (s *Store) GetDialog(ctx context.Context, tenantID, id string) (*Dialog, error) {
	return s.dialogRow(ctx, "get dialog", `SELECT `+dialogColumns+` FROM dialogs WHERE tenant_id = ? AND id = ?`, tenantID, id)
}

// dialogRow runs query, which yields dialogColumns of at most one dialog,
// and returns that dialog; none is ErrNotFound. op names it in errors.
func (s *Store) dialogRow(ctx context.Context, op, query string, args ...any) (*Dialog, error) {
	rows, err := s.q(ctx).Raw(query, args...).Rows()
	if err != nil {
		return nil, wrap(op, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, wrap(op, err)
		}
		return nil, wrap(op, ErrNotFound)
	}
	d, err := scanDialog(rows)
	return d, wrap(op, err)
}

// dialogColumns are Dialog's columns in scanDialog's order.
const dialogColumns = "id, tenant_id, bot_id, version_number, preview, user_id, channel, context, status, state, " +
	"last_seq, created_at, updated_at"

// scanDialog reads a row of dialogColumns into a Dialog, and the columns
// that follow them into more.
func scanDialog(rows *sql.Rows, more ...any) (*Dialog, error) {
	var d Dialog
	dest := append([]any{&d.ID, &d.TenantID, &d.BotID, &d.VersionNumber, &d.Preview, &d.UserID, &d.Channel, &d.Context,
		&d.Status, &d.State, &d.LastSeq, &d.CreatedAt, &d.UpdatedAt}, more...)
	if err := rows.Scan(dest...); err != nil {
		return nil, err
	}
	return &d, nil
}

// ListDialogs returns one page of the tenant's dialogs matching f, oldest
// first.
func (s *Store) ListDialogs(ctx context.Context, tenantID string, f DialogFilter, p Page) ([]Dialog, string, error) {
	q := s.q(ctx).Where("tenant_id = ?", tenantID)
	if f.BotID != "" {
		q = q.Where("bot_id = ?", f.BotID)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	var rows []Dialog
	if err := paged(q, "id", p).Find(&rows).Error; err != nil {
		return nil, "", wrap("list dialogs", err)
	}
	rows, next := nextCursor(rows, p, func(d Dialog) string { return d.ID })
	return rows, next, nil
}

// SaveDialogState stores the loop state and status of the tenant's dialog
// together, so a reader never sees a paused status without its state.
func (s *Store) SaveDialogState(ctx context.Context, tenantID, id, status, state string) error {
	return s.updateDialog(ctx, "save dialog state", tenantID, id,
		map[string]any{"status": status, "state": state, "updated_at": s.db.NowFunc()})
}

// Save is what a run stores of its dialog as it settles: the loop state
// and status, the reply it completed last, and, as it ends, its lease.
type Save struct {
	TenantID, DialogID string
	Status, State      string
	// ReplyID, when set, is a streaming reply that Reply completes in the
	// same commit, so a run's last reply costs no write of its own.
	ReplyID string
	Reply   MessageUpdate
	// Owner is the run's lease; Release gives it up in the same commit, as
	// the run ends.
	Owner   string
	Release bool
}

// SaveRun stores sv in one commit: on PostgreSQL in one statement, so the
// end of a run costs one WAL flush and one round trip. It writes only
// while sv.Owner holds the dialog's lease: a run whose lease expired and
// was taken by another process is ErrConflict and writes nothing, so it
// never overwrites the new holder's state. It returns the dialog's
// last_seq as of that commit: the runtime checks that no message was
// written that its run did not see. A reply that is not the tenant's is
// ErrNotFound, after the rest is saved.
func (s *Store) SaveRun(ctx context.Context, sv Save) (int64, error) {
	var seq, replies int64
	var err error
	if s.dialect == DialectPostgres {
		seq, replies, err = s.saveRunStatement(ctx, sv)
	} else {
		err = s.Tx(ctx, func(tx *Store) error {
			var err error
			seq, replies, err = tx.saveRunSteps(ctx, sv)
			return err
		})
	}
	if err == nil && replies == 0 && sv.ReplyID != "" {
		err = ErrNotFound
	}
	if err != nil {
		return 0, wrap("save run", err)
	}
	return seq, nil
}

const (
	heldSQL       = `SELECT 1 FROM dialog_leases WHERE tenant_id = ? AND dialog_id = ? AND owner = ?`
	saveDialogSQL = `UPDATE dialogs SET status = ?, state = ?, updated_at = ? WHERE tenant_id = ? AND id = ?`
	releaseSQL    = `DELETE FROM dialog_leases WHERE tenant_id = ? AND dialog_id = ? AND owner = ?`
)

// saveRunStatement is SaveRun on PostgreSQL: the reply and the dialog's
// update are data-modifying CTEs that act only if held found the lease
// still the run's. held deletes the lease row when the run ends, and
// locks it otherwise; either way a takeover that commits meanwhile is
// seen, as PostgreSQL re-reads a row it waited for before acting on it.
func (s *Store) saveRunStatement(ctx context.Context, sv Save) (seq, replies int64, err error) {
	query := saveStatements[saveKind{release: sv.Release, reply: sv.ReplyID != ""}]
	var saved sql.NullInt64
	var held bool
	if err := s.numbered(ctx, query, s.saveArgs(sv)...).Row().Scan(&saved, &replies, &held); err != nil {
		return 0, 0, err
	}
	switch {
	case !held:
		return 0, 0, ErrConflict
	case !saved.Valid:
		return 0, 0, ErrNotFound
	}
	return saved.Int64, replies, nil
}

// saveKind shapes the save statement: whether it releases the lease,
// and whether it completes a reply.
type saveKind struct{ release, reply bool }

// saveStatements holds the save statement of every kind, numbered for the
// driver once rather than on every turn.
var saveStatements = func() map[saveKind]string {
	m := map[saveKind]string{}
	for _, release := range []bool{false, true} {
		for _, reply := range []bool{false, true} {
			k := saveKind{release: release, reply: reply}
			m[k] = numberPlaceholders(saveSQL(k))
		}
	}
	return m
}()

// saveSQL is the save statement of kind k, with ? placeholders that
// saveArgs fills in the same order.
func saveSQL(k saveKind) string {
	const ifHeld = ` AND EXISTS (SELECT 1 FROM held)`
	held := "WITH held AS (" + heldSQL + " FOR UPDATE), "
	if k.release {
		held = "WITH held AS (" + releaseSQL + " RETURNING 1), "
	}
	reply := "reply AS (SELECT 1 WHERE false), "
	if k.reply {
		reply = "reply AS (" + updateMessageSQL + ifHeld + " RETURNING 1), "
	}
	return held + reply + "saved AS (" + saveDialogSQL + ifHeld + ` RETURNING last_seq)
SELECT (SELECT last_seq FROM saved), (SELECT count(*) FROM reply), EXISTS (SELECT 1 FROM held)`
}

// saveArgs are the values of the placeholders of sv's save statement.
func (s *Store) saveArgs(sv Save) []any {
	args := []any{sv.TenantID, sv.DialogID, sv.Owner}
	if sv.ReplyID != "" {
		args = append(args, updateMessageArgs(sv.TenantID, sv.ReplyID, sv.Reply)...)
	}
	return append(args, sv.Status, sv.State, s.db.NowFunc(), sv.TenantID, sv.DialogID)
}

// saveRunSteps is SaveRun as statements of one transaction, on SQLite,
// whose write lock (taken at BEGIN) keeps the lease as it was read.
func (s *Store) saveRunSteps(ctx context.Context, sv Save) (seq, replies int64, err error) {
	// A release deletes the lease as it checks it: should the rest fail,
	// the transaction gives it back.
	check := heldSQL
	if sv.Release {
		check = releaseSQL + " RETURNING 1"
	}
	held, err := s.int64s(ctx, check, sv.TenantID, sv.DialogID, sv.Owner)
	if err != nil {
		return 0, 0, err
	}
	if len(held) == 0 {
		return 0, 0, ErrConflict
	}
	if sv.ReplyID != "" {
		res := s.w(ctx).Exec(updateMessageSQL, updateMessageArgs(sv.TenantID, sv.ReplyID, sv.Reply)...)
		if res.Error != nil {
			return 0, 0, res.Error
		}
		replies = res.RowsAffected
	}
	seqs, err := s.int64s(ctx, saveDialogSQL+" RETURNING last_seq", sv.Status, sv.State, s.db.NowFunc(), sv.TenantID, sv.DialogID)
	if err != nil {
		return 0, 0, err
	}
	if len(seqs) == 0 {
		return 0, 0, ErrNotFound
	}
	return seqs[0], replies, nil
}

// SetDialogStatus changes only the status of the tenant's dialog.
func (s *Store) SetDialogStatus(ctx context.Context, tenantID, id, status string) error {
	return s.updateDialog(ctx, "set dialog status", tenantID, id,
		map[string]any{"status": status, "updated_at": s.db.NowFunc()})
}

func (s *Store) updateDialog(ctx context.Context, op, tenantID, id string, fields map[string]any) error {
	res := s.w(ctx).Model(&Dialog{}).Where("tenant_id = ? AND id = ?", tenantID, id).Updates(fields)
	if res.Error != nil {
		return wrap(op, res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap(op, ErrNotFound)
	}
	return nil
}
