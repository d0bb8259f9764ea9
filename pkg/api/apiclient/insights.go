package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// AnalyticsMetrics are the analytics of a period, a bucket or a version
// (docs/insights.md). Rates are null when nothing was counted.
type AnalyticsMetrics struct {
	Dialogs         int64         `json:"dialogs"`
	Outcomes        OutcomeCounts `json:"outcomes"`
	ResolutionRate  *float64      `json:"resolution_rate"`
	HandoffRate     *float64      `json:"handoff_rate"`
	AbandonmentRate *float64      `json:"abandonment_rate"`
	FailureRate     *float64      `json:"failure_rate"`
	DeflectionRate  *float64      `json:"deflection_rate"`
	CSAT            *float64      `json:"csat"`
	Ratings         int64         `json:"ratings"`
	AverageRating   *float64      `json:"average_rating"`
	FirstResponseMS *float64      `json:"first_response_ms"`
	ReplyMS         *float64      `json:"reply_ms"`
	// OperatorFirstResponseMS is the mean time from a handoff to an
	// operator's first message; null without handed-off dialogs answered.
	OperatorFirstResponseMS *float64 `json:"operator_first_response_ms"`
	// HandoffTakeMS is the mean time from a handoff to an operator taking
	// the dialog; HandoffTakeP50MS the median, as the bound of its bucket
	// (30 s, 1 min, 2 min, 5 min, 15 min, 1 h or 24 h). Null without takes.
	HandoffTakeMS    *float64 `json:"handoff_take_ms"`
	HandoffTakeP50MS *float64 `json:"handoff_take_p50_ms"`
	// OperatorReplyMS is the mean time from an end user's message during
	// a handoff to the operator's answer; null without answers.
	OperatorReplyMS   *float64 `json:"operator_reply_ms"`
	ToolCalls         int64    `json:"tool_calls"`
	ToolFailureRate   *float64 `json:"tool_failure_rate"`
	KnowledgeSearches int64    `json:"knowledge_searches"`
	KnowledgeHitRate  *float64 `json:"knowledge_hit_rate"`
	CostUSD           float64  `json:"cost_usd"`
	CostPerResolved   *float64 `json:"cost_per_resolved"`
}

// OutcomeCounts count dialogs by outcome.
type OutcomeCounts struct {
	Resolved  int64 `json:"resolved"`
	HandedOff int64 `json:"handed_off"`
	Abandoned int64 `json:"abandoned"`
	Failed    int64 `json:"failed"`
}

// Analytics is GET /analytics's answer: the period's metrics, a series
// by bucket, and with compare=versions the bot's versions compared.
type Analytics struct {
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	Bucket string    `json:"bucket"`
	AnalyticsMetrics
	Series   []AnalyticsPoint  `json:"series"`
	Versions []VersionCompared `json:"versions,omitempty"`
}

// AnalyticsPoint is one bucket of the series.
type AnalyticsPoint struct {
	Start time.Time `json:"start"`
	AnalyticsMetrics
}

// VersionCompared is one version of the bot over the period: live,
// canary or earlier. Below the threshold Enough is false and Note says
// "not enough dialogs yet"; otherwise the 95% Wilson intervals are set.
type VersionCompared struct {
	Version int    `json:"version"`
	Role    string `json:"role,omitempty"`
	AnalyticsMetrics
	Enough       bool      `json:"enough"`
	Note         string    `json:"note,omitempty"`
	ResolutionCI *Interval `json:"resolution_ci,omitempty"`
	HandoffCI    *Interval `json:"handoff_ci,omitempty"`
	CSATCI       *Interval `json:"csat_ci,omitempty"`
}

// Interval is a confidence interval of a rate.
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// UnansweredReport is GET /analytics/unanswered's answer.
type UnansweredReport struct {
	Groups []UnansweredGroup `json:"groups"`
}

// UnansweredGroup is a question the bot could not answer, as asked in
// several dialogs, with why (reasons: handoff, rated_down, tool_failed,
// cannot_answer, knowledge_miss).
type UnansweredGroup struct {
	Question string         `json:"question"`
	Count    int            `json:"count"`
	Examples []string       `json:"examples"`
	Dialogs  []string       `json:"dialogs"`
	Reasons  map[string]int `json:"reasons"`
}

// AnalyticsQuery selects GET /analytics and /analytics/unanswered.
type AnalyticsQuery struct {
	Bot, From, To, Bucket, Compare string
}

func (q AnalyticsQuery) values() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"bot": q.Bot, "from": q.From, "to": q.To, "bucket": q.Bucket, "compare": q.Compare} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v
}

// Analytics reports the tenant's analytics.
func (c *Client) Analytics(ctx context.Context, tenant string, q AnalyticsQuery) (*Analytics, error) {
	var out Analytics
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "analytics")+"?"+q.values().Encode(), nil, &out)
}

// Unanswered reports the questions the tenant's bots could not answer.
func (c *Client) Unanswered(ctx context.Context, tenant string, q AnalyticsQuery) (*UnansweredReport, error) {
	var out UnansweredReport
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "analytics", "unanswered")+"?"+q.values().Encode(), nil, &out)
}

// RatingRequest is POST /dialogs/{dialog}/rating: rating 1 to 5, or
// thumbs up or down, and an optional comment.
type RatingRequest struct {
	Rating  int    `json:"rating,omitempty"`
	Thumbs  string `json:"thumbs,omitempty"`
	Comment string `json:"comment,omitempty"`
}

// RateDialog stores the end user's rating of a dialog.
func (c *Client) RateDialog(ctx context.Context, tenant, dialog string, req RatingRequest) (*Dialog, error) {
	var out Dialog
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "dialogs", dialog, "rating"), req, &out)
}

// LabelsRequest is PUT /dialogs/{dialog}/labels.
type LabelsRequest struct {
	Labels []string `json:"labels"`
}

// SetLabels replaces a dialog's labels.
func (c *Client) SetLabels(ctx context.Context, tenant, dialog string, labels []string) (*Dialog, error) {
	var out Dialog
	return &out, c.Do(ctx, http.MethodPut, tenantPath(tenant, "dialogs", dialog, "labels"), LabelsRequest{Labels: labels}, &out)
}

// ToTestRequest is POST /dialogs/{dialog}/to-test: which expectations
// the test gets, and whether to save it with the bot.
type ToTestRequest struct {
	Name          string   `json:"name,omitempty"`
	ToolsCalled   bool     `json:"tools_called,omitempty"`
	ReplyContains []string `json:"reply_contains,omitempty"`
	NoHandoff     bool     `json:"no_handoff,omitempty"`
	Retrieved     []string `json:"retrieved,omitempty"`
	Save          bool     `json:"save,omitempty"`
}

// ToTestResponse is the bot's slug and one test in the docs/testing.md
// format; Version is the version saved with it (save).
type ToTestResponse struct {
	Bot     string          `json:"bot"`
	Test    json.RawMessage `json:"test"`
	Version int             `json:"version,omitempty"`
}

// DialogToTest makes a conversation test from a dialog.
func (c *Client) DialogToTest(ctx context.Context, tenant, dialog string, req ToTestRequest) (*ToTestResponse, error) {
	var out ToTestResponse
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "dialogs", dialog, "to-test"), req, &out)
}
