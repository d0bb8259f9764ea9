package store

import (
	"context"
	"fmt"
	"time"
)

// DayActivity is what happened in a tenant (or one bot of it) on one UTC
// day: what the console charts.
type DayActivity struct {
	Day string
	// Dialogs and EndUsers count the dialogs started that day (previews
	// aside) and the distinct named end users who started them.
	Dialogs  int64
	EndUsers int64
	// The metered counters of usage_daily.
	Messages     int64
	InputTokens  int64
	OutputTokens int64
	CostMicroUSD int64 `gorm:"column:cost_micro_usd"`
	ToolCalls    int64
	ToolErrors   int64
	// FeedbackUp and FeedbackDown count the ratings first given that day.
	FeedbackUp   int64
	FeedbackDown int64
}

// Activity returns the tenant's activity for each day from..to (inclusive,
// DayFormat), every day present, zeros included; botID "" is every bot.
// Each of its three queries reads only the range's rows through an index
// (usage_daily's key, dialogs and feedback by tenant and creation time),
// so its cost follows the range, not the tenant's history.
func (s *Store) Activity(ctx context.Context, tenantID, botID, from, to string) ([]DayActivity, error) {
	first, err := time.Parse(DayFormat, from)
	if err != nil {
		return nil, wrap("activity", err)
	}
	last, err := time.Parse(DayFormat, to)
	if err != nil {
		return nil, wrap("activity", err)
	}
	var out []DayActivity
	for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
		out = append(out, DayActivity{Day: d.Format(DayFormat)})
	}
	days := make(map[string]*DayActivity, len(out))
	for i := range out {
		days[out[i].Day] = &out[i]
	}
	q := activityQuery{tenantID: tenantID, botID: botID, from: from, to: to, start: first, end: last.AddDate(0, 0, 1)}
	for _, add := range []func(context.Context, activityQuery, map[string]*DayActivity) error{s.meteredDays, s.startedDays, s.ratedDays} {
		if err := add(ctx, q, days); err != nil {
			return nil, wrap("activity", err)
		}
	}
	return out, nil
}

// activityQuery is what Activity's queries share: the tenant, the bot (""
// for all), the days from..to and the times start..end they cover.
type activityQuery struct {
	tenantID, botID, from, to string
	start, end                time.Time
}

// botClause narrows a query to the bot, appending its argument to args.
func (q activityQuery) botClause(args ...any) (string, []any) {
	if q.botID == "" {
		return "", args
	}
	return " AND bot_id = ?", append(args, q.botID)
}

// meteredDays fills the counters usage_daily holds.
func (s *Store) meteredDays(ctx context.Context, q activityQuery, days map[string]*DayActivity) error {
	bot, args := q.botClause(q.tenantID, q.from, q.to)
	var rows []DayActivity
	err := s.q(ctx).Raw(`SELECT day, SUM(messages) AS messages, SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens,
  SUM(cost_micro_usd) AS cost_micro_usd, SUM(tool_calls) AS tool_calls, SUM(tool_errors) AS tool_errors
FROM usage_daily WHERE tenant_id = ? AND day >= ? AND day <= ?`+bot+` GROUP BY day`, args...).Scan(&rows).Error
	for _, m := range rows {
		if d := days[m.Day]; d != nil {
			d.Messages, d.InputTokens, d.OutputTokens, d.CostMicroUSD = m.Messages, m.InputTokens, m.OutputTokens, m.CostMicroUSD
			d.ToolCalls, d.ToolErrors = m.ToolCalls, m.ToolErrors
		}
	}
	return err
}

// startedDays fills the dialogs started and their distinct end users.
func (s *Store) startedDays(ctx context.Context, q activityQuery, days map[string]*DayActivity) error {
	day := s.dayOf("created_at")
	bot, args := q.botClause(q.tenantID, q.start, q.end)
	var rows []struct {
		Day               dayKey
		Dialogs, EndUsers int64
	}
	err := s.q(ctx).Raw(`SELECT `+day+` AS day, COUNT(*) AS dialogs, COUNT(DISTINCT NULLIF(user_id, '')) AS end_users
FROM dialogs WHERE tenant_id = ? AND created_at >= ? AND created_at < ? AND NOT preview`+bot+` GROUP BY `+day, args...).Scan(&rows).Error
	for _, st := range rows {
		if d := days[string(st.Day)]; d != nil {
			d.Dialogs, d.EndUsers = st.Dialogs, st.EndUsers
		}
	}
	return err
}

// ratedDays fills the feedback first given each day.
func (s *Store) ratedDays(ctx context.Context, q activityQuery, days map[string]*DayActivity) error {
	day := s.dayOf("created_at")
	bot, args := q.botClause(q.tenantID, q.start, q.end)
	var rows []struct {
		Day    dayKey
		Rating string
		N      int64
	}
	err := s.q(ctx).Raw(`SELECT `+day+` AS day, rating, COUNT(*) AS n
FROM message_feedback WHERE tenant_id = ? AND created_at >= ? AND created_at < ?`+bot+` GROUP BY `+day+`, rating`, args...).Scan(&rows).Error
	for _, r := range rows {
		d := days[string(r.Day)]
		switch {
		case d == nil:
		case r.Rating == FeedbackUp:
			d.FeedbackUp += r.N
		default:
			d.FeedbackDown += r.N
		}
	}
	return err
}

// dayOf is the SQL of the UTC day (DayFormat) of the time column col.
// Times are written in UTC (see Open's NowFunc); SQLite keeps them as
// text that starts with the date.
func (s *Store) dayOf(col string) string {
	if s.dialect == DialectPostgres {
		return "to_char(" + col + " AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
	}
	return "substr(" + col + ", 1, 10)"
}

// dayKey scans a day that dayOf computed. SQLite's driver hands text that
// reads as a date back as a time.Time; PostgreSQL's, as text.
type dayKey string

// Scan implements sql.Scanner.
func (d *dayKey) Scan(v any) error {
	switch v := v.(type) {
	case time.Time:
		*d = dayKey(v.UTC().Format(DayFormat))
	case string:
		*d = dayKey(v)
	case []byte:
		*d = dayKey(v)
	default:
		return fmt.Errorf("store: a day of type %T", v)
	}
	return nil
}
