package store

import (
	"context"
	"fmt"
	"time"
)

// Activity is a tenant's activity over time, by bucket: reach it with Store.Tenant(id).Activity().
type Activity struct{ scope }

// Activity buckets: a chart's points are UTC days or UTC hours.
const (
	BucketDay  = "day"
	BucketHour = "hour"
)

// bucketFormat is how a bucket's start is written (DayFormat, HourFormat)
// and step is its length.
var (
	bucketFormat = map[string]string{BucketDay: DayFormat, BucketHour: HourFormat}
	bucketStep   = map[string]time.Duration{BucketDay: 24 * time.Hour, BucketHour: time.Hour}
)

// ActivityBucket is what happened in a tenant (or one bot of it) in one
// UTC day or hour: what the console charts.
type ActivityBucket struct {
	// Start is the bucket's first moment: a day (DayFormat) or an hour
	// (HourFormat).
	Start string
	// Dialogs and EndUsers count the dialogs started in the bucket
	// (previews aside) and the distinct named end users who started them.
	Dialogs  int64
	EndUsers int64
	// The metered counters of usage_daily or usage_hourly.
	Messages     int64
	InputTokens  int64
	OutputTokens int64
	CostMicroUSD int64 `gorm:"column:cost_micro_usd"`
	ToolCalls    int64
	ToolErrors   int64
	// FeedbackUp and FeedbackDown count the ratings first given in the
	// bucket.
	FeedbackUp   int64
	FeedbackDown int64
}

// Buckets returns the tenant's activity in each bucket (BucketDay or
// BucketHour) from start up to end (exclusive; both UTC and on bucket
// boundaries), every bucket present, zeros included; botID "" is every
// bot. Each of its three queries reads only the range's rows through an
// index (the usage tables' keys, dialogs and feedback by tenant and
// creation time), so its cost follows the range, not the tenant's history.
func (a Activity) Buckets(ctx context.Context, botID, bucket string, start, end time.Time) ([]ActivityBucket, error) {
	s, tenantID := a.s, a.tenant
	format, ok := bucketFormat[bucket]
	if !ok {
		return nil, fmt.Errorf("store: activity: no bucket %q", bucket)
	}
	start, end = start.UTC(), end.UTC()
	var out []ActivityBucket
	for b := start; b.Before(end); b = b.Add(bucketStep[bucket]) {
		out = append(out, ActivityBucket{Start: b.Format(format)})
	}
	buckets := make(map[string]*ActivityBucket, len(out))
	for i := range out {
		buckets[out[i].Start] = &out[i]
	}
	q := activityQuery{tenantID: tenantID, botID: botID, bucket: bucket, start: start, end: end}
	for _, add := range []func(context.Context, activityQuery, map[string]*ActivityBucket) error{s.meteredBuckets, s.startedBuckets, s.ratedBuckets} {
		if err := add(ctx, q, buckets); err != nil {
			return nil, wrap("activity", err)
		}
	}
	return out, nil
}

// activityQuery is what Activity's queries share: the tenant, the bot (""
// for all), the bucket and the times start..end the buckets cover.
type activityQuery struct {
	tenantID, botID, bucket string
	start, end              time.Time
}

// botClause narrows a query to the bot, appending its argument to args.
func (q activityQuery) botClause(args ...any) (string, []any) {
	if q.botID == "" {
		return "", args
	}
	return " AND bot_id = ?", append(args, q.botID)
}

// meteredBuckets fills the counters usage_daily or usage_hourly holds.
func (s *Store) meteredBuckets(ctx context.Context, q activityQuery, buckets map[string]*ActivityBucket) error {
	table, col := "usage_daily", "day"
	if q.bucket == BucketHour {
		table, col = "usage_hourly", "hour"
	}
	format := bucketFormat[q.bucket]
	bot, args := q.botClause(q.tenantID, q.start.Format(format), q.end.Format(format))
	var rows []ActivityBucket
	err := s.q(ctx).Raw(`SELECT `+col+` AS start, SUM(messages) AS messages, SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens,
  SUM(cost_micro_usd) AS cost_micro_usd, SUM(tool_calls) AS tool_calls, SUM(tool_errors) AS tool_errors
FROM `+table+` WHERE tenant_id = ? AND `+col+` >= ? AND `+col+` < ?`+bot+` GROUP BY `+col, args...).Scan(&rows).Error
	for _, m := range rows {
		if b := buckets[m.Start]; b != nil {
			b.Messages, b.InputTokens, b.OutputTokens, b.CostMicroUSD = m.Messages, m.InputTokens, m.OutputTokens, m.CostMicroUSD
			b.ToolCalls, b.ToolErrors = m.ToolCalls, m.ToolErrors
		}
	}
	return err
}

// startedBuckets fills the dialogs started and their distinct end users.
func (s *Store) startedBuckets(ctx context.Context, q activityQuery, buckets map[string]*ActivityBucket) error {
	of := s.bucketOf("created_at", q.bucket)
	bot, args := q.botClause(q.tenantID, q.start, q.end)
	var rows []struct {
		Start             string
		Dialogs, EndUsers int64
	}
	err := s.q(ctx).Raw(`SELECT `+of+` AS start, COUNT(*) AS dialogs, COUNT(DISTINCT NULLIF(user_id, '')) AS end_users
FROM dialogs WHERE tenant_id = ? AND created_at >= ? AND created_at < ? AND NOT preview`+bot+` GROUP BY `+of, args...).Scan(&rows).Error
	for _, st := range rows {
		if b := buckets[st.Start]; b != nil {
			b.Dialogs, b.EndUsers = st.Dialogs, st.EndUsers
		}
	}
	return err
}

// ratedBuckets fills the feedback first given in each bucket.
func (s *Store) ratedBuckets(ctx context.Context, q activityQuery, buckets map[string]*ActivityBucket) error {
	of := s.bucketOf("created_at", q.bucket)
	bot, args := q.botClause(q.tenantID, q.start, q.end)
	var rows []struct {
		Start  string
		Rating string
		N      int64
	}
	err := s.q(ctx).Raw(`SELECT `+of+` AS start, rating, COUNT(*) AS n
FROM message_feedback WHERE tenant_id = ? AND created_at >= ? AND created_at < ?`+bot+` GROUP BY `+of+`, rating`, args...).Scan(&rows).Error
	for _, r := range rows {
		b := buckets[r.Start]
		switch {
		case b == nil:
		case r.Rating == FeedbackUp:
			b.FeedbackUp += r.N
		default:
			b.FeedbackDown += r.N
		}
	}
	return err
}

// bucketOf is the SQL of the UTC day (DayFormat) or hour (HourFormat) of
// the time column col. Times are written in UTC (see Open's NowFunc);
// SQLite keeps them as text that starts "YYYY-MM-DD HH", and hands the
// computed text back as text (Open's _texttotime=0).
func (s *Store) bucketOf(col, bucket string) string {
	switch {
	case s.dialect == DialectPostgres && bucket == BucketHour:
		return "to_char(" + col + ` AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24')`
	case s.dialect == DialectPostgres:
		return "to_char(" + col + " AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
	case bucket == BucketHour:
		return "substr(" + col + ", 1, 10) || 'T' || substr(" + col + ", 12, 2)"
	}
	return "substr(" + col + ", 1, 10)"
}
