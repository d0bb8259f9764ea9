package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// UsageLedger is a tenant's metered usage: reach it with Store.Tenant(id).Usage().
type UsageLedger struct{ scope }

// DayFormat is how usage days are written: UTC calendar days, which sort
// as strings. HourFormat is how usage hours are: the UTC hour, likewise.
const (
	DayFormat  = "2006-01-02"
	HourFormat = "2006-01-02T15"
)

// Usage is what one tenant's bot spent through one key with one provider
// on one UTC day. KeyID is "" for calls made without a key (sessions, the
// operator); Provider is "" for use metered before providers were recorded.
type Usage struct {
	TenantID     string `gorm:"primaryKey"`
	Day          string `gorm:"primaryKey"`
	BotID        string `gorm:"primaryKey"`
	KeyID        string `gorm:"primaryKey"`
	Provider     string `gorm:"primaryKey"`
	InputTokens  int64
	OutputTokens int64
	// CostMicroUSD is the price in millionths of a US dollar: integers add
	// up exactly where floats would drift.
	CostMicroUSD int64 `gorm:"column:cost_micro_usd"`
	ToolCalls    int64
	Turns        int64
	// Messages counts the messages stored (the user's and the replies);
	// ToolErrors the tool calls that failed.
	Messages   int64
	ToolErrors int64
	// EmbeddingTokens are the tokens knowledge searches embedded, apart
	// from the model's InputTokens and OutputTokens.
	EmbeddingTokens int64
	UpdatedAt       time.Time
	// Hour (HourFormat, within Day) is when it was used; when set, UsageLedger.Add
	// adds the counters to usage_hourly too, for hourly charts.
	Hour string `gorm:"-"`
}

// TableName pins the table step 2 created.
func (Usage) TableName() string { return "usage_daily" }

// Add adds u's counters to its row (tenant, day, bot, key, provider), creating
// the row on first use, in one statement so concurrent turns never lose an
// increment; with u.Hour set, also to its hour's row, in the same
// transaction, so a retried write counts neither twice.
func (us UsageLedger) Add(ctx context.Context, u *Usage) error {
	s := us.s
	u.TenantID = us.tenant
	if u.Hour == "" {
		return wrap("add usage", s.addDaily(ctx, u))
	}
	err := s.Tx(ctx, func(tx *Store) error {
		if err := tx.addDaily(ctx, u); err != nil {
			return err
		}
		hour := map[string]any{"tenant_id": u.TenantID, "hour": u.Hour, "bot_id": u.BotID, "messages": u.Messages,
			"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens, "cost_micro_usd": u.CostMicroUSD,
			"tool_calls": u.ToolCalls, "tool_errors": u.ToolErrors, "embedding_tokens": u.EmbeddingTokens}
		return tx.w(ctx).Table("usage_hourly").Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "tenant_id"}, {Name: "hour"}, {Name: "bot_id"}},
			DoUpdates: adding("usage_hourly", "messages", "input_tokens", "output_tokens", "cost_micro_usd", "tool_calls", "tool_errors", "embedding_tokens"),
		}).Create(hour).Error
	})
	return wrap("add usage", err)
}

func (s *Store) addDaily(ctx context.Context, u *Usage) error {
	u.UpdatedAt = s.db.NowFunc()
	return s.w(ctx).Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "tenant_id"}, {Name: "day"}, {Name: "bot_id"}, {Name: "key_id"}, {Name: "provider"}},
		DoUpdates: append(adding("usage_daily", "input_tokens", "output_tokens", "cost_micro_usd", "tool_calls", "turns", "messages", "tool_errors", "embedding_tokens"),
			clause.Assignment{Column: clause.Column{Name: "updated_at"}, Value: u.UpdatedAt}),
	}).Create(u).Error
}

// adding is the upsert's assignments that add each new count of cols to
// the row of table.
func adding(table string, cols ...string) clause.Set {
	set := make(clause.Set, len(cols))
	for i, col := range cols {
		set[i] = clause.Assignment{Column: clause.Column{Name: col}, Value: gorm.Expr(table + "." + col + " + excluded." + col)}
	}
	return set
}

// Usage groupings for UsageLedger.Sum.
const (
	GroupByDay      = "day"
	GroupByBot      = "bot"
	GroupByKey      = "key"
	GroupByProvider = "provider"
)

// UsageTotal is the sum of usage rows sharing one Group value (a day, a
// bot id, a key id or a provider).
type UsageTotal struct {
	Group        string
	InputTokens  int64
	OutputTokens int64
	CostMicroUSD int64 `gorm:"column:cost_micro_usd"`
	ToolCalls    int64
	Turns        int64
	Messages     int64
	ToolErrors   int64
	// EmbeddingTokens are the tokens knowledge searches embedded.
	EmbeddingTokens int64
}

// Sum totals the tenant's usage for days from..to (inclusive, in
// DayFormat; empty means unbounded), grouped by day, bot, key or provider, ordered by
// the group.
func (us UsageLedger) Sum(ctx context.Context, from, to, groupBy string) ([]UsageTotal, error) {
	s, tenantID := us.s, us.tenant
	col, ok := map[string]string{GroupByDay: "day", GroupByBot: "bot_id", GroupByKey: "key_id", GroupByProvider: "provider"}[groupBy]
	if !ok {
		return nil, fmt.Errorf("store: sum usage: cannot group by %q", groupBy)
	}
	q := s.q(ctx).Model(&Usage{}).Where("tenant_id = ?", tenantID)
	if from != "" {
		q = q.Where("day >= ?", from)
	}
	if to != "" {
		q = q.Where("day <= ?", to)
	}
	var rows []UsageTotal
	q = q.Select(col + " AS " + `"group"` + ", SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens," +
		" SUM(cost_micro_usd) AS cost_micro_usd, SUM(tool_calls) AS tool_calls, SUM(turns) AS turns," +
		" SUM(messages) AS messages, SUM(tool_errors) AS tool_errors, SUM(embedding_tokens) AS embedding_tokens").
		Group(col)
	if groupBy == GroupByProvider {
		// The messages a user sends are counted under no provider; that
		// row is a provider's only if it metered a model (usage from before
		// providers were recorded).
		q = q.Having("provider <> '' OR SUM(turns) > 0 OR SUM(input_tokens + output_tokens) > 0")
	}
	err := q.Order(col).Scan(&rows).Error
	if err != nil {
		return nil, wrap("sum usage", err)
	}
	return rows, nil
}

// DayTokens returns the tenant's input, output and embedding tokens on
// day, for daily quotas. It runs before every turn of a tenant with a quota.
func (us UsageLedger) DayTokens(ctx context.Context, day string) (int64, error) {
	s, tenantID := us.s, us.tenant
	n, err := s.int64s(ctx, "SELECT COALESCE(SUM(input_tokens + output_tokens + embedding_tokens), 0) FROM usage_daily WHERE tenant_id = $1 AND day = $2",
		tenantID, day)
	if err != nil {
		return 0, wrap("day tokens", err)
	}
	if len(n) == 0 {
		return 0, nil
	}
	return n[0], nil
}
