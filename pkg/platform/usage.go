package platform

import (
	"context"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/store"
)

// Usage is a tenant's usage and activity: reach it with Service.Usage().
type Usage struct{ svc *Service }

// Usage returns a tenant's usage and activity.
func (s *Service) Usage() Usage { return Usage{s} }

// UsageQuery selects usage: days From..To inclusive (YYYY-MM-DD, empty
// for unbounded) grouped by day, bot, key or provider (default day).
type UsageQuery struct {
	From, To, GroupBy string
}

// Summary reports the tenant's metered usage as written; runtimes write
// theirs every second (see dialog.Runtime.Metering().Summary).
func (us Usage) Summary(ctx context.Context, p *Principal, tenant string, q UsageQuery) ([]apiclient.UsageRow, error) {
	s := us.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjUsage, auth.ActRead)
	if err != nil {
		return nil, err
	}
	var ps problems
	if q.GroupBy == "" {
		q.GroupBy = store.GroupByDay
	}
	switch q.GroupBy {
	case store.GroupByDay, store.GroupByBot, store.GroupByKey, store.GroupByProvider:
	default:
		ps.add("/group_by", "must be day, bot, key or provider")
	}
	checkDay(&ps, "/from", q.From)
	checkDay(&ps, "/to", q.To)
	if q.From != "" && q.To != "" && q.From > q.To {
		ps.add("/to", "must not be before from")
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	rows, err := s.store.Tenant(t.ID).Usage().Sum(ctx, q.From, q.To, q.GroupBy)
	if err != nil {
		return nil, s.internal(ctx, "usage", err)
	}
	return mapSlice(rows, func(u *store.UsageTotal) apiclient.UsageRow {
		return apiclient.UsageRow{Group: u.Group, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
			CostMicroUSD: u.CostMicroUSD, CostUSD: float64(u.CostMicroUSD) / 1e6, ToolCalls: u.ToolCalls, Turns: u.Turns,
			EmbeddingTokens: u.EmbeddingTokens}
	}), nil
}

func checkDay(ps *problems, pointer, day string) {
	if day == "" {
		return
	}
	if _, err := time.Parse(store.DayFormat, day); err != nil {
		ps.add(pointer, "must be a date like 2030-01-31")
	}
}
