package dialog

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// Insights is what a tenant learns from its dialogs: outcomes, analytics and unanswered questions: reach it with Runtime.Insights().
type Insights struct{ rt *Runtime }

// Insights returns what a tenant learns from its dialogs: outcomes, analytics and unanswered questions.
func (r *Runtime) Insights() Insights { return Insights{r} }

// This file answers GET /analytics from the hourly rollups
// (store.Insights.Sum): a period costs one grouped read of at most one row
// per hour and bot version, however many messages it held.

// AnalyticsQuery selects what GET /analytics reports.
type AnalyticsQuery struct {
	// Bot is a bot id or slug; "" is every bot.
	Bot string
	// From and To bound the period like DialogFilter's (a date, To
	// included, or an RFC 3339 time, To excluded); by default the 30
	// days up to now.
	From, To string
	// Bucket is "day" (the default) or "hour".
	Bucket string
	// Compare "versions" adds the bot's versions compared (Bot required).
	Compare string
}

// Analytics buckets.
const (
	BucketDay  = "day"
	BucketHour = "hour"
)

// The longest periods a series may cover, in buckets.
const (
	maxDayBuckets  = 400
	maxHourBuckets = 24 * 35
)

// MinCompareDialogs is how many dialogs with an outcome a version needs
// before its rates are compared: fewer answer "not enough dialogs yet".
const MinCompareDialogs = 30

// NotEnoughDialogs is the note a version with fewer than
// MinCompareDialogs dialogs gets instead of confidence intervals.
const NotEnoughDialogs = "not enough dialogs yet"

// Metrics are the analytics of a period, a bucket or a version.
type Metrics struct {
	Dialogs  int64
	Outcomes Outcomes
	// Rates of dialogs with an outcome; nil without dialogs.
	ResolutionRate, HandoffRate, AbandonmentRate, FailureRate, DeflectionRate *float64
	// CSAT is the share of ratings of 4 or 5 (of 5); nil without ratings.
	CSAT          *float64
	Ratings       int64
	AverageRating *float64
	// FirstResponseMS and ReplyMS are the mean times from a user's
	// message to the reply's first text and to its end.
	FirstResponseMS, ReplyMS *float64
	// OperatorFirstResponseMS is the mean time from a handoff to the
	// operator's first message in the dialog.
	OperatorFirstResponseMS *float64
	// HandoffTakeMS is the mean time from a handoff to an operator taking
	// the dialog; HandoffTakeP50MS the bound of the bucket
	// (store.TakeBuckets) that holds the median: half the dialogs waited
	// at most that long.
	HandoffTakeMS, HandoffTakeP50MS *float64
	// OperatorReplyMS is the mean time from an end user's message during
	// a handoff to the operator's answer.
	OperatorReplyMS   *float64
	ToolCalls         int64
	ToolFailureRate   *float64
	KnowledgeSearches int64
	KnowledgeHitRate  *float64
	CostUSD           float64
	// CostPerResolved is the cost over resolved dialogs; nil without any.
	CostPerResolved *float64
}

// Outcomes count dialogs by outcome.
type Outcomes struct {
	Resolved, HandedOff, Abandoned, Failed int64
}

// SeriesPoint is a bucket of the series: its start and its metrics.
type SeriesPoint struct {
	Start time.Time
	Metrics
}

// VersionCompared is one version's metrics over the period, with 95%
// Wilson intervals when it has MinCompareDialogs dialogs.
type VersionCompared struct {
	Version int
	// Role is "live", "canary" or "" (an earlier version).
	Role string
	Metrics
	// Enough says the version has MinCompareDialogs dialogs; Note says
	// NotEnoughDialogs when not.
	Enough bool
	Note   string
	// Intervals of the resolution, handoff and CSAT rates; nil when not
	// Enough (CSAT also without ratings).
	ResolutionCI, HandoffCI, CSATCI *Interval
}

// Interval is a confidence interval of a rate.
type Interval struct{ Low, High float64 }

// Analytics is GET /analytics's answer.
type Analytics struct {
	From, To time.Time
	Bucket   string
	Metrics
	Series   []SeriesPoint
	Versions []VersionCompared
}

// Analytics reports the tenant's dialog outcomes, ratings, latency,
// tools and cost over a period from the rollups, for readers of its
// dialogs.
func (in Insights) Analytics(ctx context.Context, p *platform.Principal, tenant string, q AnalyticsQuery) (Analytics, error) {
	r := in.rt
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActRead)
	if err != nil {
		return Analytics{}, err
	}
	from, to, bucket, err := r.Insights().period(q.From, q.To, q.Bucket)
	if err != nil {
		return Analytics{}, err
	}
	var bot *store.Bot
	if q.Bot != "" {
		if bot, err = r.store.Tenant(tenantID).Bots().Get(ctx, q.Bot); err != nil {
			return Analytics{}, r.storeErr(ctx, "analytics: bot", "bot", err)
		}
	}
	switch {
	case q.Compare != "" && q.Compare != "versions":
		return Analytics{}, platform.Invalid(platform.Detail{Pointer: "/compare", Message: "must be versions"})
	case q.Compare != "" && bot == nil:
		return Analytics{}, platform.Invalid(platform.Detail{Pointer: "/bot", Message: "is required to compare versions"})
	}
	if err := r.meter.flush(ctx); err != nil {
		return Analytics{}, r.internal(ctx, "analytics: write metered rollups", err)
	}
	rq := store.RollupQuery{From: from.Format(store.HourFormat), To: to.Format(store.HourFormat)}
	if bot != nil {
		rq.BotID = bot.ID
	}
	rows, err := r.store.Tenant(tenantID).Insights().Sum(ctx, rq)
	if err != nil {
		return Analytics{}, r.internal(ctx, "analytics", err)
	}
	out := Analytics{From: from, To: to, Bucket: bucket}
	var total store.Rollup
	buckets := map[time.Time]*store.Rollup{}
	for i := range rows {
		total.Plus(&rows[i])
		at, err := time.Parse(store.HourFormat, rows[i].Hour)
		if err != nil {
			return Analytics{}, r.internal(ctx, "analytics: hour", err)
		}
		start := bucketStart(at, bucket)
		if buckets[start] == nil {
			buckets[start] = &store.Rollup{}
		}
		buckets[start].Plus(&rows[i])
	}
	out.Metrics = metricsOf(&total)
	for at := from; at.Before(to); at = nextBucket(at, bucket) {
		sum := buckets[at]
		if sum == nil {
			sum = &store.Rollup{}
		}
		out.Series = append(out.Series, SeriesPoint{Start: at, Metrics: metricsOf(sum)})
	}
	if q.Compare != "" {
		out.Versions = compareVersions(bot, rows)
	}
	return out, nil
}

// period checks and resolves the query's period to whole buckets.
func (i Insights) period(fromText, toText, bucket string) (from, to time.Time, _ string, err error) {
	r := i.rt
	var ps problems
	switch bucket {
	case "":
		bucket = BucketDay
	case BucketDay, BucketHour:
	default:
		ps.add("/bucket", "must be day or hour")
	}
	from = filterTime(&ps, "/from", fromText, false)
	to = filterTime(&ps, "/to", toText, true)
	if err := ps.err(); err != nil {
		return from, to, bucket, err
	}
	if to.IsZero() {
		to = r.now()
	}
	if from.IsZero() {
		from = to.AddDate(0, 0, -30)
	}
	from = bucketStart(from.UTC(), bucket)
	if end := bucketStart(to.UTC(), bucket); end.Before(to) {
		to = nextBucket(end, bucket)
	}
	n, most := to.Sub(from)/time.Hour, time.Duration(maxHourBuckets)
	if bucket == BucketDay {
		n, most = n/24, maxDayBuckets
	}
	switch {
	case !from.Before(to):
		ps.add("/to", "must be after from")
	case n > most:
		ps.add("/from", "the period may have at most %d buckets of a %s", most, bucket)
	}
	return from, to, bucket, ps.err()
}

func bucketStart(at time.Time, bucket string) time.Time {
	if bucket == BucketHour {
		return at.UTC().Truncate(time.Hour)
	}
	y, m, d := at.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

func nextBucket(at time.Time, bucket string) time.Time {
	if bucket == BucketHour {
		return at.Add(time.Hour)
	}
	return at.AddDate(0, 0, 1)
}

// metricsOf turns summed counters into metrics.
func metricsOf(s *store.Rollup) Metrics {
	m := Metrics{Dialogs: s.Dialogs, Outcomes: Outcomes{Resolved: s.Resolved, HandedOff: s.HandedOff, Abandoned: s.Abandoned,
		Failed: s.Failed}, Ratings: s.Ratings, ToolCalls: s.ToolCalls, KnowledgeSearches: s.KnowledgeSearch,
		CostUSD: float64(s.CostMicroUSD) / 1e6}
	m.ResolutionRate = ratio(s.Resolved, s.Dialogs)
	m.HandoffRate = ratio(s.HandedOff, s.Dialogs)
	m.AbandonmentRate = ratio(s.Abandoned, s.Dialogs)
	m.FailureRate = ratio(s.Failed, s.Dialogs)
	m.DeflectionRate = ratio(s.Dialogs-s.HandedOff, s.Dialogs)
	m.CSAT = ratio(s.Satisfied, s.Ratings)
	m.AverageRating = ratio(s.RatingSum, s.Ratings)
	m.FirstResponseMS = ratio(s.FirstResponseMS, s.FirstResponses)
	m.ReplyMS = ratio(s.ReplyMS, s.Replies)
	m.OperatorFirstResponseMS = ratio(s.OperatorResponseMS, s.OperatorResponses)
	m.HandoffTakeMS = ratio(s.TakeMS, s.Takes)
	if p50, ok := s.TakeLE.Median(s.Takes); ok {
		ms := float64(p50.Milliseconds())
		m.HandoffTakeP50MS = &ms
	}
	m.OperatorReplyMS = ratio(s.OperatorReplyMS, s.OperatorReplies)
	m.ToolFailureRate = ratio(s.ToolFailures, s.ToolCalls)
	m.KnowledgeHitRate = ratio(s.KnowledgeHits, s.KnowledgeSearch)
	if s.Resolved > 0 {
		c := float64(s.CostMicroUSD) / 1e6 / float64(s.Resolved)
		m.CostPerResolved = &c
	}
	return m
}

// ratio is n/of, nil when of is 0.
func ratio(n, of int64) *float64 {
	if of == 0 {
		return nil
	}
	v := float64(n) / float64(of)
	return &v
}

// compareVersions sums the period's rollups per version of bot, live
// and canary first, then the others newest first.
func compareVersions(bot *store.Bot, rows []store.Rollup) []VersionCompared {
	sums := map[int]*store.Rollup{}
	for i := range rows {
		v := rows[i].VersionNumber
		if sums[v] == nil {
			sums[v] = &store.Rollup{}
		}
		sums[v].Plus(&rows[i])
	}
	for _, v := range []int{bot.PublishedVersion, bot.CanaryVersion} {
		if v > 0 && sums[v] == nil {
			sums[v] = &store.Rollup{}
		}
	}
	role := func(v int) string {
		switch v {
		case bot.PublishedVersion:
			return "live"
		case bot.CanaryVersion:
			return "canary"
		}
		return ""
	}
	rank := func(v int) int {
		switch role(v) {
		case "live":
			return 0
		case "canary":
			return 1
		}
		return 2
	}
	var out []VersionCompared
	for v, s := range sums {
		vc := VersionCompared{Version: v, Role: role(v), Metrics: metricsOf(s), Enough: s.Dialogs >= MinCompareDialogs}
		if vc.Enough {
			vc.ResolutionCI = wilson(s.Resolved, s.Dialogs)
			vc.HandoffCI = wilson(s.HandedOff, s.Dialogs)
			vc.CSATCI = wilson(s.Satisfied, s.Ratings)
		} else {
			vc.Note = NotEnoughDialogs
		}
		out = append(out, vc)
	}
	slices.SortFunc(out, func(a, b VersionCompared) int {
		if ra, rb := rank(a.Version), rank(b.Version); ra != rb {
			return ra - rb
		}
		return b.Version - a.Version
	})
	return out
}

// wilson is the 95% Wilson score interval of k successes in n trials,
// which stays inside [0, 1] and behaves for small n and rates near 0 or
// 1, where the normal approximation does not; nil when n is 0.
func wilson(k, n int64) *Interval {
	if n == 0 {
		return nil
	}
	const z = 1.959963984540054
	p, fn := float64(k)/float64(n), float64(n)
	denom := 1 + z*z/fn
	center := (p + z*z/(2*fn)) / denom
	half := z * math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn)) / denom
	return &Interval{Low: math.Max(0, center-half), High: math.Min(1, center+half)}
}
