package api

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/platform"
)

// analytics: GET /v1/tenants/{tenant}/analytics?bot=&from=&to=&bucket=day|hour&compare=versions
// -> the period's outcomes, rates, latency, tools and cost, with a series
// by bucket; as CSV (one row a bucket) with Accept: text/csv or ?format=csv.
func (d *dialogAPI) analytics(c *gin.Context) {
	a, err := d.rt.Insights().Analytics(c.Request.Context(), principal(c), c.Param("tenant"), dialog.AnalyticsQuery{Bot: c.Query("bot"),
		From: c.Query("from"), To: c.Query("to"), Bucket: c.Query("bucket"), Compare: c.Query("compare")})
	if err != nil {
		d.fail(c, err)
		return
	}
	out := apiclient.Analytics{From: a.From, To: a.To, Bucket: a.Bucket, AnalyticsMetrics: metricsOut(a.Metrics),
		Series: []apiclient.AnalyticsPoint{}}
	for _, p := range a.Series {
		out.Series = append(out.Series, apiclient.AnalyticsPoint{Start: p.Start, AnalyticsMetrics: metricsOut(p.Metrics)})
	}
	for _, v := range a.Versions {
		out.Versions = append(out.Versions, apiclient.VersionCompared{Version: v.Version, Role: v.Role,
			AnalyticsMetrics: metricsOut(v.Metrics), Enough: v.Enough, Note: v.Note,
			ResolutionCI: intervalOut(v.ResolutionCI), HandoffCI: intervalOut(v.HandoffCI), CSATCI: intervalOut(v.CSATCI)})
	}
	if wantsCSV(c) {
		writeAnalyticsCSV(c, out)
		return
	}
	c.JSON(http.StatusOK, out)
}

// wantsCSV says the caller asked for CSV: ?format=csv or an Accept
// header naming text/csv.
func wantsCSV(c *gin.Context) bool {
	return c.Query("format") == "csv" || strings.Contains(c.GetHeader("Accept"), "text/csv")
}

// writeAnalyticsCSV answers the series as CSV, one row a bucket; empty
// cells are rates with nothing counted.
func writeAnalyticsCSV(c *gin.Context, a apiclient.Analytics) {
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", `attachment; filename="analytics.csv"`)
	c.Status(http.StatusOK)
	w := csv.NewWriter(c.Writer)
	_ = w.Write([]string{"start", "dialogs", "resolved", "handed_off", "abandoned", "failed", "resolution_rate", "handoff_rate",
		"abandonment_rate", "csat", "ratings", "first_response_ms", "reply_ms", "operator_first_response_ms", "handoff_take_ms",
		"handoff_take_p50_ms", "operator_reply_ms", "tool_calls", "tool_failure_rate",
		"knowledge_searches", "knowledge_hit_rate", "cost_usd", "cost_per_resolved"})
	num := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'f', -1, 64)
	}
	for _, p := range a.Series {
		m := p.AnalyticsMetrics
		_ = w.Write([]string{p.Start.Format(time.RFC3339), itoa(m.Dialogs), itoa(m.Outcomes.Resolved), itoa(m.Outcomes.HandedOff),
			itoa(m.Outcomes.Abandoned), itoa(m.Outcomes.Failed), num(m.ResolutionRate), num(m.HandoffRate), num(m.AbandonmentRate),
			num(m.CSAT), itoa(m.Ratings), num(m.FirstResponseMS), num(m.ReplyMS), num(m.OperatorFirstResponseMS), num(m.HandoffTakeMS),
			num(m.HandoffTakeP50MS), num(m.OperatorReplyMS), itoa(m.ToolCalls), num(m.ToolFailureRate), itoa(m.KnowledgeSearches), num(m.KnowledgeHitRate), strconv.FormatFloat(m.CostUSD, 'f', -1, 64), num(m.CostPerResolved)})
	}
	w.Flush()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func metricsOut(m dialog.Metrics) apiclient.AnalyticsMetrics {
	return apiclient.AnalyticsMetrics{Dialogs: m.Dialogs, Outcomes: apiclient.OutcomeCounts{Resolved: m.Outcomes.Resolved,
		HandedOff: m.Outcomes.HandedOff, Abandoned: m.Outcomes.Abandoned, Failed: m.Outcomes.Failed},
		ResolutionRate: m.ResolutionRate, HandoffRate: m.HandoffRate, AbandonmentRate: m.AbandonmentRate, FailureRate: m.FailureRate,
		DeflectionRate: m.DeflectionRate, CSAT: m.CSAT, Ratings: m.Ratings, AverageRating: m.AverageRating,
		FirstResponseMS: m.FirstResponseMS, ReplyMS: m.ReplyMS, OperatorFirstResponseMS: m.OperatorFirstResponseMS,
		HandoffTakeMS: m.HandoffTakeMS, HandoffTakeP50MS: m.HandoffTakeP50MS, OperatorReplyMS: m.OperatorReplyMS, ToolCalls: m.ToolCalls, ToolFailureRate: m.ToolFailureRate,
		KnowledgeSearches: m.KnowledgeSearches, KnowledgeHitRate: m.KnowledgeHitRate, CostUSD: m.CostUSD, CostPerResolved: m.CostPerResolved}
}

func intervalOut(i *dialog.Interval) *apiclient.Interval {
	if i == nil {
		return nil
	}
	return &apiclient.Interval{Low: i.Low, High: i.High}
}

// unanswered: GET /v1/tenants/{tenant}/analytics/unanswered?bot=&from=&to=
// -> {groups: [{question, count, examples, dialogs, reasons}]}.
func (d *dialogAPI) unanswered(c *gin.Context) {
	groups, err := d.rt.Insights().Unanswered(c.Request.Context(), principal(c), c.Param("tenant"),
		dialog.UnansweredQuery{Bot: c.Query("bot"), From: c.Query("from"), To: c.Query("to")})
	if err != nil {
		d.fail(c, err)
		return
	}
	out := apiclient.UnansweredReport{Groups: []apiclient.UnansweredGroup{}}
	for _, g := range groups {
		out.Groups = append(out.Groups, apiclient.UnansweredGroup{Question: g.Question, Count: g.Count, Examples: g.Examples,
			Dialogs: g.Dialogs, Reasons: g.Reasons})
	}
	c.JSON(http.StatusOK, out)
}

// rateDialog: PUT /v1/tenants/{tenant}/dialogs/{dialog}/rating
// {rating: 1-5 | thumbs: up|down, comment?} -> the dialog. The widget's
// publishable key may call it.
func (d *dialogAPI) rateDialog(c *gin.Context) {
	var req apiclient.RatingRequest
	if err := decodeJSON(c, &req); err != nil {
		d.fail(c, err)
		return
	}
	dlg, err := d.rt.Dialogs().Rate(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("dialog"), browserOrigin(c.Request),
		dialog.RatingInput{Rating: req.Rating, Thumbs: req.Thumbs, Comment: req.Comment})
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, dialog.WireDialog(dlg))
}

// setLabels: PUT /v1/tenants/{tenant}/dialogs/{dialog}/labels {labels} -> the dialog.
func (d *dialogAPI) setLabels(c *gin.Context) {
	var req apiclient.LabelsRequest
	if err := decodeJSON(c, &req); err != nil {
		d.fail(c, err)
		return
	}
	if req.Labels == nil {
		d.fail(c, invalid("/labels", "is required: a list of labels ([] removes them all)"))
		return
	}
	dlg, err := d.rt.Dialogs().SetLabels(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("dialog"), req.Labels)
	if err != nil {
		d.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, dialog.WireDialog(dlg))
}

// dialogToTest: POST /v1/tenants/{tenant}/dialogs/{dialog}/to-test
// {name?, tools_called?, reply_contains?, no_handoff?, retrieved?, save?} -> {bot, test, version?}.
func (s *server) dialogToTest(c *gin.Context) {
	var req apiclient.ToTestRequest
	if err := decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	got, err := s.platform.Tests().FromDialog(c.Request.Context(), principal(c), c.Param("tenant"), c.Param("dialog"), platform.ToTestInput{
		Name: req.Name, ToolsCalled: req.ToolsCalled, ReplyContains: req.ReplyContains, NoHandoff: req.NoHandoff, Retrieved: req.Retrieved, Save: req.Save})
	if err != nil {
		s.fail(c, err)
		return
	}
	test, err := json.Marshal(got.Test)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, apiclient.ToTestResponse{Bot: got.Bot, Test: test, Version: got.Version})
}
