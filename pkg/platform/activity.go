package platform

import (
	"context"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/store"
)

// ActivityQuery selects a chart's range of one bot (id or slug; empty:
// all of them) in buckets of a UTC day or hour (Bucket "day", the
// default, or "hour"). By day, From and To are days (YYYY-MM-DD), both
// included; empty To is today, empty From ActivityDefaultDays before To.
// By hour, each is a day or an hour (YYYY-MM-DDTHH, UTC), To included
// (a day to its last hour); empty To is this hour, empty From
// ActivityDefaultHours before To.
type ActivityQuery struct {
	From, To, Bot, Bucket string
}

// ActivityDefaultDays and ActivityMaxDays bound a daily chart's range;
// ActivityDefaultHours and ActivityMaxHours an hourly one's.
const (
	ActivityDefaultDays  = 30
	ActivityMaxDays      = 366
	ActivityDefaultHours = 24
	ActivityMaxHours     = 7 * 24
)

// Activity returns the tenant's activity day by day or hour by hour, for
// charts: every bucket of the range, empty ones included. q comes back
// with its range and bucket filled in.
func (u Usage) Activity(ctx context.Context, p *Principal, tenant string, q *ActivityQuery, now time.Time) ([]apiclient.ActivityDay, error) {
	s := u.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjUsage, auth.ActRead)
	if err != nil {
		return nil, err
	}
	start, end, err := activityRange(q, now)
	if err != nil {
		return nil, err
	}
	botID := ""
	if q.Bot != "" {
		b, err := s.store.Tenant(t.ID).Bots().Get(ctx, q.Bot)
		if err != nil {
			return nil, s.storeErr(ctx, "activity: bot", "bot", "", err)
		}
		botID = b.ID
	}
	buckets, err := s.store.Tenant(t.ID).Activity().Buckets(ctx, botID, q.Bucket, start, end)
	if err != nil {
		return nil, s.internal(ctx, "activity", err)
	}
	return mapSlice(buckets, func(b *store.ActivityBucket) apiclient.ActivityDay {
		d := apiclient.ActivityDay{Day: b.Start[:len(store.DayFormat)], Dialogs: b.Dialogs, EndUsers: b.EndUsers, Messages: b.Messages, InputTokens: b.InputTokens,
			OutputTokens: b.OutputTokens, CostMicroUSD: b.CostMicroUSD, CostUSD: float64(b.CostMicroUSD) / 1e6,
			ToolCalls: b.ToolCalls, ToolErrors: b.ToolErrors, FeedbackUp: b.FeedbackUp, FeedbackDown: b.FeedbackDown}
		if q.Bucket == store.BucketHour {
			d.Hour = b.Start
		}
		return d
	}), nil
}

// activityRange checks q and returns the times its buckets cover, start
// included and end not, filling in q's defaults in the bucket's format.
func activityRange(q *ActivityQuery, now time.Time) (start, end time.Time, err error) {
	var ps problems
	if q.Bucket == "" {
		q.Bucket = store.BucketDay
	}
	step, format, max, deflt := 24*time.Hour, store.DayFormat, ActivityMaxDays, ActivityDefaultDays
	switch q.Bucket {
	case store.BucketDay:
		checkDay(&ps, "/from", q.From)
		checkDay(&ps, "/to", q.To)
	case store.BucketHour:
		step, format, max, deflt = time.Hour, store.HourFormat, ActivityMaxHours, ActivityDefaultHours
		checkHour(&ps, "/from", q.From)
		checkHour(&ps, "/to", q.To)
	default:
		ps.add("/bucket", `must be "day" or "hour"`)
	}
	if err := ps.err(); err != nil {
		return start, end, err
	}
	// end is the end of To's last bucket; a day given for an hourly To
	// covers the whole day.
	end = now.UTC().Truncate(step).Add(step)
	if q.To != "" {
		to, length := parseDayOrHour(q.To)
		end = to.Add(length)
	}
	start = end.Add(-time.Duration(deflt) * step)
	if q.From != "" {
		start, _ = parseDayOrHour(q.From)
	}
	switch {
	case !start.Before(end):
		ps.add("/to", "must not be before from")
	case end.Sub(start) > time.Duration(max)*step:
		ps.add("/from", "the range may cover at most %d %ss", max, q.Bucket)
	}
	if err := ps.err(); err != nil {
		return start, end, err
	}
	q.From, q.To = start.Format(format), end.Add(-step).Format(format)
	return start, end, nil
}

// checkHour adds a problem unless s is empty, a day or an hour.
func checkHour(ps *problems, pointer, s string) {
	if s == "" {
		return
	}
	if _, length := parseDayOrHour(s); length == 0 {
		ps.add(pointer, "must be a date like 2030-01-31 or a UTC hour like 2030-01-31T15")
	}
}

// parseDayOrHour reads a day or an hour and says how long it lasts; 0 if
// it is neither.
func parseDayOrHour(s string) (time.Time, time.Duration) {
	if t, err := time.Parse(store.HourFormat, s); err == nil {
		return t, time.Hour
	}
	if t, err := time.Parse(store.DayFormat, s); err == nil {
		return t, 24 * time.Hour
	}
	return time.Time{}, 0
}
