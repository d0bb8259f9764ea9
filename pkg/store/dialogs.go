package store

import (
	"cmp"
	"context"
	"database/sql"
	"time"
)

// Dialogs are a tenant's dialogs: reach them with Store.Tenant(id).Dialogs().
type Dialogs struct{ scope }

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
	State   string
	LastSeq int64
	// ClosedReason says why a closed dialog was closed (Dialogs.Close).
	ClosedReason string
	// ParentDialogID and ParentCallID link a sub-run's dialog (an agent
	// called as a tool) to the dialog and tool call that started it; ""
	// for every other dialog.
	ParentDialogID string
	ParentCallID   string
	// Outcome is how the dialog ended (Outcome... constants), "" while it
	// is open; OutcomeReason says which fact decided it, OutcomeAt when it
	// was computed (Insights.Settle).
	Outcome       string
	OutcomeReason string
	OutcomeAt     *time.Time
	// Rating is the end user's rating of the whole dialog, 1 to 5 (a
	// thumbs up is 5, down 1); 0 when none was given.
	Rating        int
	RatingComment string
	// Labels are the tenant's own tags on the dialog.
	Labels    StringList
	CreatedAt time.Time
	UpdatedAt time.Time
}

// DialogFilter narrows Dialogs.List; empty fields match everything.
type DialogFilter struct {
	BotID  string
	Status string
	// ParentDialogID keeps the sub-run dialogs of one dialog.
	ParentDialogID string
	// From and To, when not zero, keep dialogs created at or after From
	// and before To.
	From, To time.Time
	// UserID keeps the dialogs of one end user.
	UserID string
	// Feedback keeps dialogs with feedback of a rating (FeedbackUp,
	// FeedbackDown), with any (FeedbackAny) or without (FeedbackNone).
	Feedback string
	// Query keeps dialogs with a message holding every word of it, found
	// through the full-text index.
	Query string
	// Outcome keeps dialogs of one outcome; Label those with the label.
	Outcome, Label string
}

// Create inserts d (active unless its Status says otherwise),
// giving it an id when it has none. history, when given, becomes the
// dialog's first messages, seqs 1 to len(history), in the same
// transaction: a dialog seeded with an earlier conversation is never seen
// half seeded.
func (di Dialogs) Create(ctx context.Context, d *Dialog, history ...*Message) error {
	s := di.s
	d.TenantID = di.tenant
	if d.ID == "" {
		d.ID = NewID(PrefixDialog)
	}
	if d.Status == "" {
		d.Status = DialogActive
	}
	if d.Context == "" {
		d.Context = "{}"
	}
	if len(history) == 0 {
		return wrap("create dialog", s.w(ctx).Create(d).Error)
	}
	d.LastSeq = int64(len(history))
	for i, m := range history {
		s.fillMessage(m)
		m.TenantID, m.DialogID, m.Seq = d.TenantID, d.ID, int64(i+1)
	}
	return s.Tx(ctx, func(tx *Store) error {
		if err := tx.q(ctx).Create(d).Error; err != nil {
			return wrap("create dialog", err)
		}
		return wrap("create dialog: history", tx.q(ctx).Create(history).Error)
	})
}

// Get finds the tenant's dialog by id. Every turn reads its dialog,
// so the row is scanned by hand rather than through gorm's reflection.
func (di Dialogs) Get(ctx context.Context, id string) (*Dialog, error) {
	s, tenantID := di.s, di.tenant
	return s.dialogRow(ctx, "get dialog", `SELECT `+dialogColumns+` FROM dialogs WHERE tenant_id = $1 AND id = $2`, tenantID, id)
}

// dialogRow runs query, which yields dialogColumns of at most one dialog,
// and returns that dialog; none is ErrNotFound. op names it in errors.
func (s *Store) dialogRow(ctx context.Context, op, query string, args ...any) (*Dialog, error) {
	rows, err := s.query(ctx, query, args...)
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
	"last_seq, closed_reason, parent_dialog_id, parent_call_id, outcome, outcome_reason, outcome_at, rating, rating_comment, labels, " +
	"created_at, updated_at"

// scanDialog reads a row of dialogColumns into a Dialog, and the columns
// that follow them into more.
func scanDialog(rows *sql.Rows, more ...any) (*Dialog, error) {
	var d Dialog
	dest := append([]any{&d.ID, &d.TenantID, &d.BotID, &d.VersionNumber, &d.Preview, &d.UserID, &d.Channel, &d.Context,
		&d.Status, &d.State, &d.LastSeq, &d.ClosedReason, &d.ParentDialogID, &d.ParentCallID,
		&d.Outcome, &d.OutcomeReason, &d.OutcomeAt, &d.Rating, &d.RatingComment, &d.Labels, &d.CreatedAt, &d.UpdatedAt}, more...)
	if err := rows.Scan(dest...); err != nil {
		return nil, err
	}
	return &d, nil
}

// List returns one page of the tenant's dialogs matching f, oldest
// first.
func (di Dialogs) List(ctx context.Context, f DialogFilter, p Page) ([]Dialog, string, error) {
	q := di.filter(di.s.q(ctx), f)
	var rows []Dialog
	if err := paged(q, "id", p).Find(&rows).Error; err != nil {
		return nil, "", wrap("list dialogs", err)
	}
	rows, next := nextCursor(rows, p, func(d Dialog) string { return d.ID })
	return rows, next, nil
}

// SaveState stores the loop state and status of the tenant's dialog
// together, so a reader never sees a paused status without its state.
func (di Dialogs) SaveState(ctx context.Context, id, status, state string) error {
	return di.update(ctx, "save dialog state", id,
		map[string]any{"status": status, "state": state, "updated_at": di.s.db.NowFunc()})
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
func (di Dialogs) SaveRun(ctx context.Context, sv Save) (int64, error) {
	s := di.s
	sv.TenantID = di.tenant
	var seq, replies int64
	var err error
	if s.dialect == DialectPostgres {
		seq, replies, err = s.saveRunStatement(ctx, sv)
	} else {
		seq, replies, err = s.saveRunInTx(ctx, sv)
	}
	if err == nil && replies == 0 && sv.ReplyID != "" {
		err = ErrNotFound
	}
	if err != nil {
		return 0, wrap("save run", err)
	}
	return seq, nil
}

// saveRunSQL and saveRunReleaseSQL are Dialogs.SaveRun on PostgreSQL: the reply
// and the dialog's update are data-modifying CTEs that act only if held
// found the lease still the run's. held locks the lease row, or, as the
// run ends, deletes it; either way a takeover that commits meanwhile is
// seen, as PostgreSQL re-reads a row it waited for before acting on it.
// The save also signals the dialog changed (Dialogs.Signal), delivered as it
// commits, so a run's end costs live streams no statement of its own; it
// does so only when someone listens (SignalChanged), as every NOTIFY
// commits under one lock of the whole cluster and wakes every listening
// process.
// Their arguments: $1 tenant, $2 dialog, $3 owner, $4 status, $5 state,
// $6 updated_at, $7 the reply (” none) and $8-$16 its MessageUpdate.
const (
	saveRunSQL = `WITH held AS (
  SELECT 1 FROM dialog_leases WHERE tenant_id = $1 AND dialog_id = $2 AND owner = $3 FOR UPDATE),` + saveRunRestSQL
	saveRunReleaseSQL = `WITH held AS (
  DELETE FROM dialog_leases WHERE tenant_id = $1 AND dialog_id = $2 AND owner = $3 RETURNING 1),` + saveRunRestSQL
	saveRunRestSQL = `
reply AS (
  UPDATE messages SET content = $8, text = $9, model = $10, provider = $11, meta = $12, status = $13, turn = $14,
    input_tokens = $15, output_tokens = $16
  WHERE tenant_id = $1 AND id = $7 AND EXISTS (SELECT 1 FROM held) RETURNING 1),
saved AS (
  UPDATE dialogs SET status = CASE WHEN status = 'closed' THEN status ELSE $4 END, state = $5, updated_at = $6
  WHERE tenant_id = $1 AND id = $2 AND EXISTS (SELECT 1 FROM held) RETURNING last_seq, status, followed_until)
SELECT (SELECT last_seq FROM saved), (SELECT count(*) FROM reply), EXISTS (SELECT 1 FROM held),
  (SELECT count(*) FROM (SELECT pg_notify('` + dialogSignalChannel + `', $1 || ' ' || $2 || ' ` + SignalChanged + `') FROM saved
    WHERE followed_until > $6 OR status = '` + DialogHandoff + `') AS told)`
)

// saveRunStatement is Dialogs.SaveRun on PostgreSQL: one statement, so the end
// of a run costs one WAL flush and one round trip.
func (s *Store) saveRunStatement(ctx context.Context, sv Save) (seq, replies int64, err error) {
	query := saveRunSQL
	if sv.Release {
		query = saveRunReleaseSQL
	}
	u := sv.Reply
	rows, err := s.query(ctx, query, sv.TenantID, sv.DialogID, sv.Owner, sv.Status, sv.State, s.db.NowFunc(),
		sv.ReplyID, u.Content, u.Text, u.Model, u.Provider, u.Meta, u.Status, u.Turn, u.InputTokens, u.OutputTokens)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	var saved sql.NullInt64
	var held bool
	var told int64
	if !rows.Next() {
		return 0, 0, cmp.Or(rows.Err(), sql.ErrNoRows)
	}
	if err := rows.Scan(&saved, &replies, &held, &told); err != nil {
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

// saveRunInTx is Dialogs.SaveRun on SQLite: one transaction, whose write lock
// (taken at BEGIN) keeps the lease as it was read.
func (s *Store) saveRunInTx(ctx context.Context, sv Save) (seq, replies int64, err error) {
	err = s.Tx(ctx, func(tx *Store) error {
		// The lease must still be the run's. A release deletes it as it
		// checks: should the rest fail, the transaction gives it back.
		check := `SELECT 1 FROM dialog_leases WHERE tenant_id = $1 AND dialog_id = $2 AND owner = $3`
		if sv.Release {
			check = releaseLeaseSQL + ` RETURNING 1`
		}
		held, err := tx.int64s(ctx, check, sv.TenantID, sv.DialogID, sv.Owner)
		if err != nil {
			return err
		}
		if len(held) == 0 {
			return ErrConflict
		}
		if sv.ReplyID != "" {
			if replies, err = tx.exec(ctx, updateMessageSQL, updateMessageArgs(sv.TenantID, sv.ReplyID, sv.Reply)...); err != nil {
				return err
			}
		}
		seqs, err := tx.int64s(ctx, `UPDATE dialogs SET status = CASE WHEN status = 'closed' THEN status ELSE $3 END, state = $4, updated_at = $5 WHERE tenant_id = $1 AND id = $2
RETURNING last_seq`, sv.TenantID, sv.DialogID, sv.Status, sv.State, s.db.NowFunc())
		if err != nil {
			return err
		}
		if len(seqs) == 0 {
			return ErrNotFound
		}
		seq = seqs[0]
		return nil
	})
	return seq, replies, err
}

// SetStatus changes only the status of the tenant's dialog.
func (di Dialogs) SetStatus(ctx context.Context, id, status string) error {
	return di.update(ctx, "set dialog status", id,
		map[string]any{"status": status, "updated_at": di.s.db.NowFunc()})
}

func (di Dialogs) update(ctx context.Context, op, id string, fields map[string]any) error {
	s, tenantID := di.s, di.tenant
	res := s.w(ctx).Model(&Dialog{}).Where("tenant_id = ? AND id = ?", tenantID, id).Updates(fields)
	if res.Error != nil {
		return wrap(op, res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap(op, ErrNotFound)
	}
	return nil
}
