package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Insights are a tenant's dialog outcomes, unanswered questions and
// analytics rollups: reach them with Store.Tenant(id).Insights().
type Insights struct{ scope }

// Dialog outcomes (Dialog.Outcome); "" while a dialog is open.
const (
	OutcomeResolved  = "resolved"
	OutcomeHandedOff = "handed_off"
	OutcomeAbandoned = "abandoned"
	OutcomeFailed    = "failed"
)

// PrefixUnanswered prefixes the ids of unanswered questions.
const PrefixUnanswered = "unq"

// DialogFacts are what a dialog's outcome is computed from besides its
// messages: facts its rows do not keep.
type DialogFacts struct {
	Dialog *Dialog
	// HandedOff says the dialog was handed to a person at some point.
	HandedOff bool
	// RunFailures counts its runs that failed or hit a limit.
	RunFailures int
	// CameBackIn is a later dialog in which the same end user asked the
	// same question again ("" if none).
	CameBackIn string
}

// Facts reads the tenant's dialog with its DialogFacts.
func (in Insights) Facts(ctx context.Context, dialogID string) (*DialogFacts, error) {
	s, tenantID := in.s, in.tenant
	rows, err := s.q(ctx).Raw(`SELECT `+dialogColumns+`, handed_off, run_failures, came_back_in FROM dialogs WHERE tenant_id = ? AND id = ?`,
		tenantID, dialogID).Rows()
	if err != nil {
		return nil, wrap("dialog facts", err)
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, wrap("dialog facts", cmpErr(rows.Err(), ErrNotFound))
	}
	var f DialogFacts
	f.Dialog, err = scanDialog(rows, &f.HandedOff, &f.RunFailures, &f.CameBackIn)
	if err != nil {
		return nil, wrap("dialog facts", err)
	}
	return &f, nil
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// MarkRunFailed counts a run of the tenant's dialog that failed or hit
// a limit.
func (in Insights) MarkRunFailed(ctx context.Context, dialogID string) error {
	err := in.s.q(ctx).Model(&Dialog{}).Where("tenant_id = ? AND id = ?", in.tenant, dialogID).
		UpdateColumn("run_failures", gorm.Expr("run_failures + 1")).Error
	return wrap("mark run failed", err)
}

// SetLabels replaces the labels of the tenant's dialog.
func (in Insights) SetLabels(ctx context.Context, dialogID string, labels []string) error {
	return Dialogs(in).update(ctx, "set dialog labels", dialogID, map[string]any{"labels": StringList(labels)})
}

// Verdict is what a dialog contributes to analytics: its outcome and
// rating. Outcome "" contributes nothing (the dialog is open).
type Verdict struct {
	Outcome, Reason string
	Rating          int
	RatingComment   string
	CameBackIn      string
}

// Unanswered is a user message the bot could not answer, and why.
type Unanswered struct {
	ID            string `gorm:"primaryKey"`
	TenantID      string
	DialogID      string
	BotID         string
	VersionNumber int
	MessageID     string
	Text          string
	// Reason is handoff, rated_down, tool_failed, cannot_answer or
	// knowledge_miss.
	Reason    string
	CreatedAt time.Time
}

// TableName pins the table step 32 created.
func (Unanswered) TableName() string { return "unanswered_questions" }

// Settlement moves a dialog from one Verdict to another: Settle writes
// the new one only if the dialog still has Prev, so two servers settling
// one dialog at once count it once.
type Settlement struct {
	DialogID   string
	Prev, Next Verdict
	// Unanswered replace the dialog's unanswered questions when Next has
	// an outcome.
	Unanswered []Unanswered
	Now        time.Time
}

// Settle stores s.Next on the dialog, moves its contribution in the
// rollup of the hour the dialog started from s.Prev to s.Next and
// replaces its unanswered questions, in one transaction. A dialog whose
// verdict is no longer s.Prev is ErrConflict, and nothing is written.
func (in Insights) Settle(ctx context.Context, st Settlement) (*Dialog, error) {
	var out *Dialog
	err := in.s.Tx(ctx, func(tx *Store) error {
		p, n := st.Prev, st.Next
		var at any
		if n.Outcome != "" {
			at = st.Now.UTC()
		}
		d, err := tx.dialogRow(ctx, "settle dialog", `UPDATE dialogs SET outcome = $3, outcome_reason = $4, outcome_at = $5,
  rating = $6, rating_comment = $7, came_back_in = $8
WHERE tenant_id = $1 AND id = $2 AND outcome = $9 AND rating = $10 AND came_back_in = $11 RETURNING `+dialogColumns,
			in.tenant, st.DialogID, n.Outcome, n.Reason, at, n.Rating, n.RatingComment, n.CameBackIn, p.Outcome, p.Rating, p.CameBackIn)
		if IsNotFound(err) {
			// Another tenant's (or no) dialog is not found; one whose
			// verdict moved on is a conflict.
			if _, err := tx.Tenant(in.tenant).Dialogs().Get(ctx, st.DialogID); err != nil {
				return err
			}
			return ErrConflict
		}
		if err != nil {
			return err
		}
		out = d
		delta := Rollup{BotID: d.BotID, VersionNumber: d.VersionNumber, Channel: d.Channel, Hour: d.CreatedAt.UTC().Format(HourFormat)}
		delta.addVerdict(p, -1)
		delta.addVerdict(n, 1)
		if !delta.zero() {
			if err := tx.Tenant(in.tenant).Insights().Add(ctx, &delta); err != nil {
				return err
			}
		}
		if n.Outcome == "" {
			return nil
		}
		if err := tx.q(ctx).Where("tenant_id = ? AND dialog_id = ?", in.tenant, d.ID).Delete(&Unanswered{}).Error; err != nil {
			return err
		}
		for i := range st.Unanswered {
			u := st.Unanswered[i]
			u.ID, u.TenantID, u.DialogID, u.BotID, u.VersionNumber = NewID(PrefixUnanswered), in.tenant, d.ID, d.BotID, d.VersionNumber
			if err := tx.w(ctx).Create(&u).Error; err != nil {
				return err
			}
		}
		return nil
	})
	return out, wrap("settle dialog", err)
}

// IsNotFound reports whether err is ErrNotFound.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// Idle returns up to limit of the tenant's dialogs without an outcome
// whose last activity was before cutoff, oldest first: the idle sweep's
// work. Previews and sub-runs never get an outcome.
func (in Insights) Idle(ctx context.Context, cutoff time.Time, limit int) ([]string, error) {
	var ids []string
	err := in.s.q(ctx).Model(&Dialog{}).Where("tenant_id = ? AND outcome = '' AND updated_at < ?", in.tenant, cutoff.UTC()).
		Where("preview = ? AND parent_dialog_id = ''", false).Order("updated_at, id").Limit(limit).Pluck("id", &ids).Error
	return ids, wrap("idle dialogs", err)
}

// Resolved returns the ids of the end user's dialogs with the bot that
// were resolved at or after since and started before the dialog before:
// the dialogs a question asked again in before would unresolve.
func (in Insights) Resolved(ctx context.Context, botID, userID, before string, since time.Time) ([]string, error) {
	var ids []string
	started := in.s.q(ctx).Model(&Dialog{}).Select("created_at").Where("tenant_id = ? AND id = ?", in.tenant, before)
	err := in.s.q(ctx).Model(&Dialog{}).Where("tenant_id = ? AND bot_id = ? AND user_id = ? AND outcome = 'resolved'", in.tenant, botID, userID).
		Where("outcome_at >= ? AND id <> ? AND created_at <= (?)", since.UTC(), before, started).Order("created_at, id").Pluck("id", &ids).Error
	return ids, wrap("resolved dialogs", err)
}

// UnansweredIn returns up to limit of the tenant's unanswered questions
// asked in [from, to), of one bot when botID is set, oldest first.
func (in Insights) UnansweredIn(ctx context.Context, botID string, from, to time.Time, limit int) ([]Unanswered, error) {
	q := in.s.q(ctx).Where("tenant_id = ? AND created_at >= ? AND created_at < ?", in.tenant, from.UTC(), to.UTC())
	if botID != "" {
		q = q.Where("bot_id = ?", botID)
	}
	var out []Unanswered
	err := q.Order("created_at, id").Limit(limit).Find(&out).Error
	return out, wrap("unanswered questions", err)
}

// Rollup is one row of the analytics rollup (see schema_v33.go), or a
// delta to add to it.
type Rollup struct {
	TenantID      string `gorm:"primaryKey"`
	Hour          string `gorm:"primaryKey"`
	BotID         string `gorm:"primaryKey"`
	VersionNumber int    `gorm:"primaryKey;autoIncrement:false"`
	Channel       string `gorm:"primaryKey"`

	Dialogs, Resolved, HandedOff, Abandoned, Failed int64
	Ratings, RatingSum, Satisfied                   int64

	Replies         int64
	FirstResponseMS int64 `gorm:"column:first_response_ms"`
	FirstResponses  int64
	ReplyMS         int64 `gorm:"column:reply_ms"`
	ToolCalls       int64
	ToolFailures    int64
	KnowledgeSearch int64 `gorm:"column:knowledge_searches"`
	KnowledgeHits   int64
	CostMicroUSD    int64 `gorm:"column:cost_micro_usd"`
	// OperatorResponseMS sums, over OperatorResponses handed-off dialogs,
	// the time from the handoff to the first operator message.
	OperatorResponseMS int64 `gorm:"column:operator_response_ms"`
	OperatorResponses  int64
	// TakeMS sums, over Takes handoffs, the time from the handoff to an
	// operator taking the dialog; TakeLE counts them by TakeBuckets (a
	// take longer than the last bucket is in none).
	TakeMS int64 `gorm:"column:take_ms"`
	Takes  int64
	TakeLE TakeCounts `gorm:"embedded"`
	// OperatorReplyMS sums, over OperatorReplies answers, the time from
	// the end user's first message since the last operator message to
	// the operator's answer, in a handed-off dialog.
	OperatorReplyMS int64 `gorm:"column:operator_reply_ms"`
	OperatorReplies int64
}

// TableName pins the table step 33 created.
func (Rollup) TableName() string { return "analytics_hourly" }

// Satisfied ratings: 4 and 5 of 5 count towards CSAT.
const SatisfiedRating = 4

// rollupCounters are the rollup's counter columns.
var rollupCounters = []string{"dialogs", "resolved", "handed_off", "abandoned", "failed", "ratings", "rating_sum", "satisfied",
	"replies", "first_response_ms", "first_responses", "reply_ms", "tool_calls", "tool_failures", "knowledge_searches",
	"knowledge_hits", "cost_micro_usd", "operator_response_ms", "operator_responses", "take_ms", "takes", "take_le_30s", "take_le_1m",
	"take_le_2m", "take_le_5m", "take_le_15m", "take_le_1h", "take_le_24h", "operator_reply_ms", "operator_replies"}

func (r *Rollup) addVerdict(v Verdict, sign int64) {
	if v.Outcome == "" {
		return
	}
	r.Dialogs += sign
	switch v.Outcome {
	case OutcomeResolved:
		r.Resolved += sign
	case OutcomeHandedOff:
		r.HandedOff += sign
	case OutcomeAbandoned:
		r.Abandoned += sign
	case OutcomeFailed:
		r.Failed += sign
	}
	if v.Rating > 0 {
		r.Ratings += sign
		r.RatingSum += sign * int64(v.Rating)
		if v.Rating >= SatisfiedRating {
			r.Satisfied += sign
		}
	}
}

// Plus adds o's counters to r's.
func (r *Rollup) Plus(o *Rollup) {
	r.Dialogs += o.Dialogs
	r.Resolved += o.Resolved
	r.HandedOff += o.HandedOff
	r.Abandoned += o.Abandoned
	r.Failed += o.Failed
	r.Ratings += o.Ratings
	r.RatingSum += o.RatingSum
	r.Satisfied += o.Satisfied
	r.Replies += o.Replies
	r.FirstResponseMS += o.FirstResponseMS
	r.FirstResponses += o.FirstResponses
	r.ReplyMS += o.ReplyMS
	r.ToolCalls += o.ToolCalls
	r.ToolFailures += o.ToolFailures
	r.KnowledgeSearch += o.KnowledgeSearch
	r.KnowledgeHits += o.KnowledgeHits
	r.CostMicroUSD += o.CostMicroUSD
	r.OperatorResponseMS += o.OperatorResponseMS
	r.OperatorResponses += o.OperatorResponses
	r.TakeMS += o.TakeMS
	r.Takes += o.Takes
	r.TakeLE.plus(&o.TakeLE)
	r.OperatorReplyMS += o.OperatorReplyMS
	r.OperatorReplies += o.OperatorReplies
}

func (r *Rollup) zero() bool {
	var z Rollup
	z.TenantID, z.Hour, z.BotID, z.VersionNumber, z.Channel = r.TenantID, r.Hour, r.BotID, r.VersionNumber, r.Channel
	return *r == z
}

// Add adds r's counters to its row (tenant, hour, bot, version,
// channel), creating it on first use, in one statement.
func (in Insights) Add(ctx context.Context, r *Rollup) error {
	r.TenantID = in.tenant
	return wrap("add rollup", in.s.w(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "tenant_id"}, {Name: "hour"}, {Name: "bot_id"}, {Name: "version_number"}, {Name: "channel"}},
		DoUpdates: adding("analytics_hourly", rollupCounters...),
	}).Create(r).Error)
}

// RollupQuery selects rollup rows: hours in [From, To) (HourFormat), of
// one bot when BotID is set.
type RollupQuery struct {
	From, To string
	BotID    string
}

// Sum adds up the tenant's rollups matching q per hour and bot version,
// ordered by hour and version.
func (in Insights) Sum(ctx context.Context, q RollupQuery) ([]Rollup, error) {
	sel := "hour, version_number"
	for _, c := range rollupCounters {
		sel += ", sum(" + c + ") AS " + c
	}
	db := in.s.q(ctx).Model(&Rollup{}).Select(sel).Where("tenant_id = ? AND hour >= ? AND hour < ?", in.tenant, q.From, q.To)
	if q.BotID != "" {
		db = db.Where("bot_id = ?", q.BotID)
	}
	var out []Rollup
	err := db.Group("hour, version_number").Order("hour, version_number").Find(&out).Error
	return out, wrap("sum rollups", err)
}

// quoteJSON is s as a JSON string, quotes included.
func quoteJSON(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// containsSQL is a condition that column holds the argument as a
// substring, taken literally (LIKE would read % and _ in it).
func (s *Store) containsSQL(column string) string {
	if s.dialect == DialectPostgres {
		return "strpos(" + column + ", ?) > 0"
	}
	return "instr(" + column + ", ?) > 0"
}
