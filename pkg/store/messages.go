package store

import (
	"context"
	"database/sql"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Messages are a tenant's dialog messages and tool calls: reach them with
// Store.Tenant(id).Messages().
type Messages struct{ scope }

// Message statuses.
const (
	MessageComplete    = "complete"    // fully produced and stored
	MessageStreaming   = "streaming"   // an assistant reply being generated right now
	MessageInterrupted = "interrupted" // a reply whose run died midway (a crash)
	MessageCanceled    = "canceled"    // a reply stopped midway on request; its text so far is kept
	// MessageQueued is a user message stored on arrival and not yet taken
	// by the loop; taking it moves it to the end (Messages.Dequeue).
	MessageQueued = "queued"
)

// Message is one stored entry of a dialog, in the order Seq gives.
type Message struct {
	ID       string `gorm:"primaryKey"`
	TenantID string
	DialogID string
	// Seq orders a dialog's messages: 1, 2, 3, ... with no reuse.
	Seq  int64
	Kind string
	Role string
	// Content is the JSON array of the message's blocks (text, tool_use,
	// tool_result); Text is its plain text, for lists and search.
	Content string
	Text    string
	// Model and Provider produced an assistant message; BotVersion is the
	// version of the bot that did.
	Model      string
	Provider   string
	BotVersion int
	Status     string
	Turn       int
	// Meta is a JSON object of what the loop knows besides the blocks (tool
	// timing, summary coverage, origin).
	Meta         string
	InputTokens  int
	OutputTokens int
	CreatedAt    time.Time
}

// w starts a write of one statement bound to ctx, without the transaction
// gorm otherwise wraps around every create, update and delete: a single
// statement is atomic on its own, and the BEGIN and COMMIT around it would
// triple its round trips on the hot path of every turn.
func (s *Store) w(ctx context.Context) *gorm.DB {
	return s.db.Session(&gorm.Session{Context: ctx, SkipDefaultTransaction: true})
}

// Append stores m as the next message of its dialog, giving it an
// id and the next seq. The seq comes from an atomic increment of the
// dialog's counter, so concurrent writers (a running loop and a new user
// message) never collide; a dialog of another tenant is ErrNotFound.
func (me Messages) Append(ctx context.Context, m *Message) error {
	s := me.s
	m.TenantID = me.tenant
	s.fillMessage(m)
	if s.dialect == DialectPostgres {
		return s.appendInOneStatement(ctx, m)
	}
	return s.Tx(ctx, func(tx *Store) error { return tx.appendInTx(ctx, m) })
}

// appendInTx is Messages.Append within a transaction: it bumps the dialog's
// counter and inserts m with the new seq.
func (s *Store) appendInTx(ctx context.Context, m *Message) error {
	seq, err := s.Tenant(m.TenantID).Messages().nextSeq(ctx, m.DialogID)
	if err != nil {
		return err
	}
	m.Seq = seq
	_, err = s.exec(ctx, insertMessageSQL, messageArgs(m)...)
	return wrap("append message", err)
}

// insertMessageSQL stores a message, insertTwoMessagesSQL two (a run's
// text and the row of its reply); messageArgs are a message's arguments.
const (
	insertMessageSQL = `INSERT INTO messages (` + messageColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`
	insertTwoMessagesSQL = insertMessageSQL + `,
  ($18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34)`
)

func messageArgs(m *Message) []any {
	return []any{m.ID, m.TenantID, m.DialogID, m.Seq, m.Kind, m.Role, m.Content, m.Text, m.Model, m.Provider, m.BotVersion,
		m.Status, m.Turn, m.Meta, m.InputTokens, m.OutputTokens, m.CreatedAt}
}

// fillMessage gives a new message its id and the defaults of the fields
// left empty.
func (s *Store) fillMessage(m *Message) {
	if m.ID == "" {
		m.ID = NewID(PrefixMessage)
	}
	if m.Status == "" {
		m.Status = MessageComplete
	}
	if m.Content == "" {
		m.Content = "[]"
	}
	if m.Meta == "" {
		m.Meta = "{}"
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = s.db.NowFunc()
	}
}

// appendInOneStatement bumps the dialog's counter and inserts m with the
// new seq in one PostgreSQL statement (an UPDATE ... RETURNING feeding the
// INSERT): as atomic as the transaction SQLite needs, in one round trip
// instead of four. A dialog of another tenant updates no row, so nothing is
// inserted.
func (s *Store) appendInOneStatement(ctx context.Context, m *Message) error {
	seqs, err := s.int64s(ctx, `WITH next AS (
  UPDATE dialogs SET last_seq = last_seq + 1, updated_at = $3 WHERE tenant_id = $1 AND id = $2 RETURNING tenant_id, id, last_seq)
INSERT INTO messages (`+messageColumns+`)
SELECT $4, next.tenant_id, next.id, next.last_seq, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17 FROM next
RETURNING seq`,
		m.TenantID, m.DialogID, s.db.NowFunc(), m.ID, m.Kind, m.Role, m.Content, m.Text, m.Model, m.Provider, m.BotVersion,
		m.Status, m.Turn, m.Meta, m.InputTokens, m.OutputTokens, m.CreatedAt)
	if err != nil {
		return wrap("append message", err)
	}
	if len(seqs) == 0 {
		return wrap("append message", ErrNotFound)
	}
	m.Seq = seqs[0]
	return nil
}

// nextSeq bumps the dialog's counter and returns the new value. RETURNING
// works on PostgreSQL and on SQLite 3.35+, and the row lock (or SQLite's
// single writer) makes the increment atomic.
func (me Messages) nextSeq(ctx context.Context, dialogID string) (int64, error) {
	s, tenantID := me.s, me.tenant
	seqs, err := s.int64s(ctx, `UPDATE dialogs SET last_seq = last_seq + 1, updated_at = $3 WHERE tenant_id = $1 AND id = $2 RETURNING last_seq`,
		tenantID, dialogID, s.db.NowFunc())
	if err != nil {
		return 0, wrap("next message seq", err)
	}
	if len(seqs) == 0 {
		return 0, wrap("next message seq", ErrNotFound)
	}
	return seqs[0], nil
}

// MessageUpdate is the final form of a message first stored as streaming.
type MessageUpdate struct {
	Content, Text, Model, Provider, Meta string
	Status                               string
	Turn                                 int
	InputTokens, OutputTokens            int
}

// updateMessageSQL writes a MessageUpdate to message $2 of tenant $1;
// updateMessageArgs are its arguments.
const updateMessageSQL = `UPDATE messages SET content = $3, text = $4, model = $5, provider = $6, meta = $7, status = $8,
  turn = $9, input_tokens = $10, output_tokens = $11 WHERE tenant_id = $1 AND id = $2`

func updateMessageArgs(tenantID, id string, u MessageUpdate) []any {
	return []any{tenantID, id, u.Content, u.Text, u.Model, u.Provider, u.Meta, u.Status, u.Turn, u.InputTokens, u.OutputTokens}
}

// Update replaces the content of the tenant's message, typically a
// streaming reply that is now complete.
func (me Messages) Update(ctx context.Context, id string, u MessageUpdate) error {
	s, tenantID := me.s, me.tenant
	n, err := s.exec(ctx, updateMessageSQL, updateMessageArgs(tenantID, id, u)...)
	if err != nil {
		return wrap("update message", err)
	}
	if n == 0 {
		return wrap("update message", ErrNotFound)
	}
	return nil
}

// DiscardReply deletes the tenant's reply row that a run stored with its
// lease (Take.Reply) and never streamed into, while it is still streaming:
// a reply that did not come leaves no row behind, as before the row
// existed.
func (me Messages) DiscardReply(ctx context.Context, id string) error {
	s, tenantID := me.s, me.tenant
	_, err := s.exec(ctx, `DELETE FROM messages WHERE tenant_id = $1 AND id = $2 AND status = 'streaming'`, tenantID, id)
	return wrap("discard reply", err)
}

// markInterruptedSQL turns the streaming messages of dialog $2 of tenant
// $1 interrupted. Its status is a literal, not a bound parameter, so both
// databases can prove it covered by the partial index
// ix_messages_streaming (migration 4) and find a dialog's streaming
// replies without reading its other messages.
const markInterruptedSQL = `UPDATE messages SET status = 'interrupted' WHERE tenant_id = $1 AND dialog_id = $2 AND status = 'streaming'`

// MarkInterrupted turns every streaming message of the tenant's dialog into
// an interrupted one and says how many there were. Call it when taking the
// dialog's lease: whoever was streaming them is gone.
func (me Messages) MarkInterrupted(ctx context.Context, dialogID string) (int64, error) {
	s, tenantID := me.s, me.tenant
	n, err := s.exec(ctx, markInterruptedSQL, tenantID, dialogID)
	if err != nil {
		return 0, wrap("mark interrupted", err)
	}
	return n, nil
}

// Dequeue marks the tenant's queued message complete and gives it
// the dialog's next seq, so it sits where the loop took it: after the
// messages the loop wrote while it waited, exactly as the model saw it. A
// user message stored complete in advance, that the loop then took after
// writing others, is moved the same way.
func (me Messages) Dequeue(ctx context.Context, dialogID, id string) (*Message, error) {
	s, tenantID := me.s, me.tenant
	if m, ok, err := me.dequeueLast(ctx, dialogID, id); ok || err != nil {
		return m, err
	}
	var m Message
	err := s.Tx(ctx, func(tx *Store) error {
		err := tx.q(ctx).Where("tenant_id = ? AND dialog_id = ? AND id = ? AND status IN (?, ?)",
			tenantID, dialogID, id, MessageQueued, MessageComplete).First(&m).Error
		if err != nil {
			return wrap("dequeue message", err)
		}
		var last int64
		err = tx.q(ctx).Model(&Dialog{}).Where("tenant_id = ? AND id = ?", tenantID, dialogID).Select("last_seq").Scan(&last).Error
		if err != nil {
			return wrap("dequeue message", err)
		}
		if m.Seq != last { // something was written after it: move it to the end
			if m.Seq, err = tx.Tenant(tenantID).Messages().nextSeq(ctx, dialogID); err != nil {
				return err
			}
		}
		m.Status = MessageComplete
		return wrap("dequeue message", tx.q(ctx).Model(&Message{}).Where("tenant_id = ? AND id = ?", tenantID, id).
			Updates(map[string]any{"seq": m.Seq, "status": m.Status}).Error)
	})
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// dequeueLast completes the queued message when it is still the dialog's
// last, the usual case (nothing was written while it waited): one
// conditional UPDATE that returns the row, instead of a transaction of
// three statements. ok is false when it is not the last any more, or not
// queued, and the caller must do it the long way.
func (me Messages) dequeueLast(ctx context.Context, dialogID, id string) (*Message, bool, error) {
	s, tenantID := me.s, me.tenant
	rows, err := s.query(ctx, `UPDATE messages SET status = 'complete' WHERE tenant_id = $1 AND dialog_id = $2 AND id = $3 AND status = 'queued'
  AND seq = (SELECT last_seq FROM dialogs WHERE tenant_id = $1 AND id = $2) RETURNING `+messageColumns,
		tenantID, dialogID, id)
	if err != nil {
		return nil, false, wrap("dequeue message", err)
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, false, wrap("dequeue message", rows.Err())
	}
	var m Message
	if err := scanMessage(rows, &m); err != nil {
		return nil, false, wrap("dequeue message", err)
	}
	return &m, true, nil
}

// List returns the tenant's dialog's messages with seq greater than
// afterSeq, in order.
func (me Messages) List(ctx context.Context, dialogID string, afterSeq int64) ([]Message, error) {
	s, tenantID := me.s, me.tenant
	rows, err := s.query(ctx, `SELECT `+messageColumns+` FROM messages WHERE tenant_id = $1 AND dialog_id = $2 AND seq > $3 ORDER BY seq`,
		tenantID, dialogID, afterSeq)
	return scanMessages(rows, err, "list messages")
}

// scanMessages reads the rows of a query of messageColumns; like gorm's
// Find, none is [], not null.
func scanMessages(rows *sql.Rows, err error, op string) ([]Message, error) {
	if err != nil {
		return nil, wrap(op, err)
	}
	defer rows.Close()
	out := []Message{}
	for rows.Next() {
		out = append(out, Message{})
		if err := scanMessage(rows, &out[len(out)-1]); err != nil {
			return nil, wrap(op, err)
		}
	}
	return out, wrap(op, rows.Err())
}

// messageColumns are Message's columns in scanMessage's order.
const messageColumns = "id, tenant_id, dialog_id, seq, kind, role, content, text, model, provider, bot_version, " +
	"status, turn, meta, input_tokens, output_tokens, created_at"

// scanMessage reads a row of messageColumns into m, by hand rather than
// through gorm's reflection: every turn lists its dialog's history.
func scanMessage(rows *sql.Rows, m *Message) error {
	return rows.Scan(&m.ID, &m.TenantID, &m.DialogID, &m.Seq, &m.Kind, &m.Role, &m.Content, &m.Text, &m.Model,
		&m.Provider, &m.BotVersion, &m.Status, &m.Turn, &m.Meta, &m.InputTokens, &m.OutputTokens, &m.CreatedAt)
}

// Tool call statuses.
const (
	ToolCallPending = "pending" // waiting for a client result or a confirmation
	ToolCallDone    = "done"    // ran (or failed) and has a result
	ToolCallSkipped = "skipped" // never ran: steering, a stop, a loop
)

// ToolCall is one tool call of a dialog and, once known, its result.
type ToolCall struct {
	TenantID   string
	DialogID   string `gorm:"primaryKey"`
	CallID     string `gorm:"primaryKey"`
	MessageID  string
	Name       string
	Arguments  string
	Result     string
	IsError    bool
	Status     string
	DurationMS int64 `gorm:"column:duration_ms"`
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// PutToolCall creates the call or updates its result, status and duration
// (an upsert on dialog and call id), so announcing a call and recording its
// result are two writes of the same row.
func (me Messages) PutToolCall(ctx context.Context, c *ToolCall) error {
	s := me.s
	c.TenantID = me.tenant
	if c.Arguments == "" {
		c.Arguments = "{}"
	}
	now := s.db.NowFunc()
	c.CreatedAt, c.UpdatedAt = now, now
	update := []string{"result", "is_error", "status", "duration_ms", "updated_at"}
	if c.MessageID == "" {
		// A result arriving without its message keeps the announced one.
		res := s.w(ctx).Model(&ToolCall{}).Where("tenant_id = ? AND dialog_id = ? AND call_id = ?", c.TenantID, c.DialogID, c.CallID).
			Updates(map[string]any{"result": c.Result, "is_error": c.IsError, "status": c.Status, "duration_ms": c.DurationMS, "updated_at": now})
		if res.Error == nil && res.RowsAffected == 0 {
			return wrap("put tool call result", ErrNotFound)
		}
		return wrap("put tool call result", res.Error)
	}
	err := s.w(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "dialog_id"}, {Name: "call_id"}},
		DoUpdates: clause.AssignmentColumns(update),
		Where:     clause.Where{Exprs: []clause.Expression{gorm.Expr("tool_calls.tenant_id = excluded.tenant_id")}},
	}).Create(c).Error
	return wrap("put tool call", err)
}

// ToolCalls returns the tenant's dialog's tool calls in the order they
// were made.
func (me Messages) ToolCalls(ctx context.Context, dialogID string) ([]ToolCall, error) {
	s, tenantID := me.s, me.tenant
	var rows []ToolCall
	err := s.q(ctx).Where("tenant_id = ? AND dialog_id = ?", tenantID, dialogID).
		Order("created_at, call_id").Find(&rows).Error
	if err != nil {
		return nil, wrap("list tool calls", err)
	}
	return rows, nil
}

// ListAfter returns at most limit of the dialog's messages after
// seq afterSeq, in order: a live stream's next batch.
func (me Messages) ListAfter(ctx context.Context, dialogID string, afterSeq int64, limit int) ([]Message, error) {
	s, tenantID := me.s, me.tenant
	rows, err := s.query(ctx, `SELECT `+messageColumns+` FROM messages WHERE tenant_id = $1 AND dialog_id = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
		tenantID, dialogID, afterSeq, limit)
	return scanMessages(rows, err, "list messages after")
}
