package platform

import (
	"context"
	"time"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/store"
)

// ActivityQuery selects the days From..To inclusive (YYYY-MM-DD; empty To
// is today, empty From ActivityDefaultDays before To) of one bot (id or
// slug; empty: all of them).
type ActivityQuery struct {
	From, To, Bot string
}

// ActivityDefaultDays and ActivityMaxDays bound a chart's range.
const (
	ActivityDefaultDays = 30
	ActivityMaxDays     = 366
)

// ActivityDay is one day of a tenant's (or bot's) activity.
type ActivityDay struct {
	Day          string
	Dialogs      int64
	EndUsers     int64
	Messages     int64
	InputTokens  int64
	OutputTokens int64
	CostMicroUSD int64
	CostUSD      float64
	ToolCalls    int64
	ToolErrors   int64
	FeedbackUp   int64
	FeedbackDown int64
}

// Activity returns the tenant's activity day by day, for charts: every day
// of the range, empty ones included. q comes back with its range filled in.
func (s *Service) Activity(ctx context.Context, p *Principal, tenant string, q *ActivityQuery, now time.Time) ([]ActivityDay, error) {
	t, err := s.tenantFor(ctx, p, tenant, auth.ObjUsage, auth.ActRead)
	if err != nil {
		return nil, err
	}
	var ps problems
	checkDay(&ps, "/from", q.From)
	checkDay(&ps, "/to", q.To)
	if err := ps.err(); err != nil {
		return nil, err
	}
	to := now.UTC().Truncate(24 * time.Hour)
	if q.To != "" {
		to, _ = time.Parse(store.DayFormat, q.To)
	}
	from := to.AddDate(0, 0, 1-ActivityDefaultDays)
	if q.From != "" {
		from, _ = time.Parse(store.DayFormat, q.From)
	}
	switch {
	case from.After(to):
		ps.add("/to", "must not be before from")
	case to.Sub(from) >= ActivityMaxDays*24*time.Hour:
		ps.add("/from", "the range may cover at most 366 days")
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	q.From, q.To = from.Format(store.DayFormat), to.Format(store.DayFormat)
	botID := ""
	if q.Bot != "" {
		b, err := s.store.GetBot(ctx, t.ID, q.Bot)
		if err != nil {
			return nil, s.storeErr(ctx, "activity: bot", "bot", "", err)
		}
		botID = b.ID
	}
	days, err := s.store.Activity(ctx, t.ID, botID, q.From, q.To)
	if err != nil {
		return nil, s.internal(ctx, "activity", err)
	}
	return mapSlice(days, func(d *store.DayActivity) ActivityDay {
		return ActivityDay{Day: d.Day, Dialogs: d.Dialogs, EndUsers: d.EndUsers, Messages: d.Messages, InputTokens: d.InputTokens,
			OutputTokens: d.OutputTokens, CostMicroUSD: d.CostMicroUSD, CostUSD: float64(d.CostMicroUSD) / 1e6,
			ToolCalls: d.ToolCalls, ToolErrors: d.ToolErrors, FeedbackUp: d.FeedbackUp, FeedbackDown: d.FeedbackDown}
	}), nil
}
