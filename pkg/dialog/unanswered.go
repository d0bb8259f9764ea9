package dialog

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// maxUnansweredRows bounds the questions one GET /analytics/unanswered
// groups; maxUnansweredGroups the groups it answers, maxExamples the
// distinct texts and maxGroupDialogs the dialog ids each group lists.
const (
	maxUnansweredRows   = 5000
	maxUnansweredGroups = 100
	maxExamples         = 5
	maxGroupDialogs     = 50
)

// UnansweredGroup is one question the bot could not answer, as asked in
// several dialogs.
type UnansweredGroup struct {
	// Question is the group's most asked wording (the first asked among
	// equals).
	Question string
	Count    int
	// Examples are distinct wordings, Dialogs the dialogs they were
	// asked in, first asked first.
	Examples []string
	Dialogs  []string
	// Reasons count the group's questions by why they are unanswered.
	Reasons map[string]int
}

// UnansweredQuery selects the period and bot of GET /analytics/unanswered.
type UnansweredQuery struct{ Bot, From, To string }

// Unanswered groups the questions the tenant's bots could not answer in
// a period (docs/insights.md): user messages after which the bot handed
// off, was rated down, a tool failed or the model called cannot_answer.
// Questions whose word sets are alike (sameQuestionAs) form a group;
// groups come largest first.
func (i Insights) Unanswered(ctx context.Context, p *platform.Principal, tenant string, q UnansweredQuery) ([]UnansweredGroup, error) {
	r := i.rt
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActRead)
	if err != nil {
		return nil, err
	}
	from, to, _, err := r.Insights().period(q.From, q.To, BucketDay)
	if err != nil {
		return nil, err
	}
	botID := ""
	if q.Bot != "" {
		b, err := r.store.Tenant(tenantID).Bots().Get(ctx, q.Bot)
		if err != nil {
			return nil, r.storeErr(ctx, "unanswered: bot", "bot", err)
		}
		botID = b.ID
	}
	rows, err := r.store.Tenant(tenantID).Insights().UnansweredIn(ctx, botID, from, to, maxUnansweredRows)
	if err != nil {
		return nil, r.internal(ctx, "unanswered", err)
	}
	return groupQuestions(rows), nil
}

// groupQuestions puts each question in the first group whose first
// question it is alike, else in a new group: deterministic for rows in
// a fixed order.
func groupQuestions(rows []store.Unanswered) []UnansweredGroup {
	type group struct {
		UnansweredGroup
		words   []string
		wording map[string]int
		first   time.Time
	}
	var groups []*group
	for _, u := range rows {
		words := questionWords(u.Text)
		var g *group
		for _, c := range groups {
			if jaccard(c.words, words) >= sameQuestion {
				g = c
				break
			}
		}
		if g == nil {
			g = &group{words: words, wording: map[string]int{}, first: u.CreatedAt}
			g.Reasons = map[string]int{}
			groups = append(groups, g)
		}
		text := strings.TrimSpace(u.Text)
		g.Count++
		g.Reasons[u.Reason]++
		if g.wording[text] == 0 && len(g.Examples) < maxExamples {
			g.Examples = append(g.Examples, text)
		}
		g.wording[text]++
		if !slices.Contains(g.Dialogs, u.DialogID) && len(g.Dialogs) < maxGroupDialogs {
			g.Dialogs = append(g.Dialogs, u.DialogID)
		}
	}
	out := make([]UnansweredGroup, 0, len(groups))
	for _, g := range groups {
		best := 0
		for _, ex := range g.Examples {
			if g.wording[ex] > best {
				g.Question, best = ex, g.wording[ex]
			}
		}
		out = append(out, g.UnansweredGroup)
	}
	slices.SortStableFunc(out, func(a, b UnansweredGroup) int { return b.Count - a.Count })
	if len(out) > maxUnansweredGroups {
		out = out[:maxUnansweredGroups]
	}
	return out
}
