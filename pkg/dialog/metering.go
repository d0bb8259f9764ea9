package dialog

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// Metering is a tenant's metered usage and activity: reach it with Runtime.Metering().
type Metering struct{ rt *Runtime }

// Metering returns a tenant's metered usage and activity.
func (r *Runtime) Metering() Metering { return Metering{r} }

// onTurnEnd meters one model call (tokens, cost, tool calls, and a turn
// for regular turns) on the dialog's tenant, bot and key and the provider
// that answered, for today, then
// stops the run once the tenant is over its daily quota.
func (run *dialogRun) onTurnEnd(ctx context.Context, info agent.TurnInfo) (bool, error) {
	return run.r.meterTurn(ctx, run.dialog, run.p.KeyID, info)
}

// meterTurn meters one model call of dialog d's bot for key keyID and
// reports whether the tenant is still within its daily quota. A sub-run
// meters on its own bot and the key of the request that started it.
func (r *Runtime) meterTurn(ctx context.Context, d *store.Dialog, keyID string, info agent.TurnInfo) (bool, error) {
	now := r.now().UTC()
	u := store.Usage{TenantID: d.TenantID, Day: now.Format(store.DayFormat), Hour: now.Format(store.HourFormat), BotID: d.BotID,
		KeyID: keyID, Provider: info.Provider, InputTokens: int64(info.Usage.InputTokens), OutputTokens: int64(info.Usage.OutputTokens),
		CostMicroUSD: int64(math.Round(r.opts.Catalog.Cost(info.Model, info.Usage) * 1e6)), ToolCalls: int64(info.ToolCalls)}
	if info.Purpose == agent.PurposeTurn {
		u.Turns = 1
	}
	r.meter.add(u)
	if roll, ok := rollupOf(d, now); ok {
		roll.CostMicroUSD = u.CostMicroUSD
		r.meter.addRollup(roll)
	}
	if sh := r.opts.Shared; sh != nil {
		sh.AddTokens(d.TenantID, u.Day, u.InputTokens+u.OutputTokens)
	}
	over, err := r.Quotas().overQuota(ctx, d.TenantID, now)
	return !over, err
}

// countMessage meters a user or assistant message of the run, or a failed
// tool call, for the console's charts (as the dialog list counts them).
// They belong to no model call, so to provider "".
func (run *dialogRun) countMessage(m agent.Message) {
	now := run.r.now().UTC()
	u := store.Usage{TenantID: run.dialog.TenantID, Day: now.Format(store.DayFormat), Hour: now.Format(store.HourFormat), BotID: run.dialog.BotID,
		KeyID: run.p.KeyID}
	res := m.ToolResult()
	if roll, ok := rollupOf(run.dialog, now); ok && res != nil {
		roll.ToolCalls = 1
		if res.IsError {
			roll.ToolFailures = 1
		}
		run.r.meter.addRollup(roll)
	}
	switch {
	case m.Kind == agent.KindUser || m.Kind == agent.KindAssistant:
		u.Messages = 1
	case res != nil && res.IsError:
		u.ToolErrors = 1
	default:
		return
	}
	run.r.meter.add(u)
}

// rollupOf is the empty analytics rollup of dialog d's bot version and
// channel for the hour of now; previews count in no analytics.
func rollupOf(d *store.Dialog, now time.Time) (store.Rollup, bool) {
	return store.Rollup{TenantID: d.TenantID, Hour: now.UTC().Format(store.HourFormat), BotID: d.BotID,
		VersionNumber: d.VersionNumber, Channel: d.Channel}, !d.Preview
}

// countReply counts the run's reply for analytics: the time to its first
// text and to its end. A run that wrote no text (a handoff, a failure)
// counts no reply.
func (run *dialogRun) countReply() {
	now := run.r.now()
	roll, ok := rollupOf(run.dialog, now)
	if !ok || run.firstTextAt.IsZero() {
		return
	}
	roll.Replies, roll.FirstResponses = 1, 1
	roll.FirstResponseMS = run.firstTextAt.Sub(run.startedAt).Milliseconds()
	roll.ReplyMS = now.Sub(run.startedAt).Milliseconds()
	run.r.meter.addRollup(roll)
}

// failedStops are the stop reasons that make a dialog's outcome failed:
// an error, or a limit that cut the run short.
var failedStops = map[agent.StopReason]bool{agent.StopError: true, agent.StopMaxTurns: true, agent.StopTokenBudget: true,
	agent.StopTimeout: true, agent.StopLoopDetected: true, agent.StopTooManyErrors: true, agent.StopQuota: true}

// countFailure records on the dialog a run that failed or hit a limit.
func (run *dialogRun) countFailure(out agent.Outcome) {
	if !failedStops[out.StopReason] {
		return
	}
	ctx := context.WithoutCancel(run.ctx)
	if err := run.r.store.Tenant(run.dialog.TenantID).Insights().MarkRunFailed(ctx, run.dialog.ID); err != nil {
		run.r.log.ErrorContext(ctx, "dialog: record a failed run", "dialog", run.dialog.ID, "err", err)
	}
}

// Summary reports the tenant's metered usage, with what this process has
// metered and not written yet.
func (m Metering) Summary(ctx context.Context, p *platform.Principal, tenant string, q platform.UsageQuery) ([]apiclient.UsageRow, error) {
	r := m.rt
	if err := r.meter.flush(ctx); err != nil {
		return nil, r.internal(ctx, "usage: write metered usage", err)
	}
	return r.svc.Usage().Summary(ctx, p, tenant, q)
}

// Activity reports the tenant's activity day by day, with what this
// process has metered and not written yet.
func (m Metering) Activity(ctx context.Context, p *platform.Principal, tenant string, q *platform.ActivityQuery) ([]apiclient.ActivityDay, error) {
	r := m.rt
	if err := r.meter.flush(ctx); err != nil {
		return nil, r.internal(ctx, "activity: write metered usage", err)
	}
	return r.svc.Usage().Activity(ctx, p, tenant, q, r.now())
}

// runtimeMetrics are the Prometheus series of running dialogs. Every label
// has a bounded set of values: models outside the catalog count as
// "other", since a tenant may name any model in its config.
type runtimeMetrics struct {
	llmSeconds *prometheus.HistogramVec
	llmTokens  *prometheus.CounterVec
	toolCalls  *prometheus.CounterVec
	toolSecs   *prometheus.HistogramVec
	runs       *prometheus.CounterVec
	userTokens *prometheus.CounterVec
	deleted    *prometheus.CounterVec
	dialogs    *prometheus.CounterVec
	closed     *prometheus.CounterVec
	notes      *prometheus.CounterVec
	trials     *prometheus.CounterVec
	feedback   *prometheus.CounterVec
	agentRuns  *prometheus.CounterVec
	skillLoads *prometheus.CounterVec
	handoffs   *prometheus.CounterVec
	guardrails *prometheus.CounterVec
	toTake     prometheus.Histogram
	// knowledgeSearches are the bots' searches of their knowledge bases;
	// the tokens they embed are counted by the platform
	// (parley_knowledge_embedding_tokens_total, with the indexer's).
	knowledgeSearches *prometheus.CounterVec
	outcomes          *prometheus.CounterVec
	// operatorResponse is the time operators took to first answer a
	// handed-off dialog; unlabelled, so bounded.
	operatorResponse prometheus.Histogram
	// operatorReply is the time operators took to answer each message of
	// an end user during a handoff; unlabelled too.
	operatorReply prometheus.Histogram
}

func newRuntimeMetrics(reg prometheus.Registerer) *runtimeMetrics {
	m := &runtimeMetrics{
		llmSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "parley_llm_request_duration_seconds",
			Help:    "Model call latency by provider, model and outcome (ok or error).",
			Buckets: []float64{0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120},
		}, []string{"provider", "model", "outcome"}),
		llmTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_llm_tokens_total",
			Help: "Tokens by provider, model and direction (input or output).",
		}, []string{"provider", "model", "direction"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_tool_calls_total",
			Help: "Tool calls by kind (http, mcp, native, client) and outcome (ok, error, skipped).",
		}, []string{"kind", "outcome"}),
		toolSecs: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "parley_tool_duration_seconds",
			Help:    "Tool call latency by kind (http, mcp, native) and outcome (ok or error).",
			Buckets: []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120},
		}, []string{"kind", "outcome"}),
		dialogs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_dialogs_created_total",
			Help: "Dialogs started by variant: live (the published version), canary or preview.",
		}, []string{"variant"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_dialog_runs_total",
			Help: "Runs of the dialog loop by stop reason.",
		}, []string{"stop_reason"}),
		userTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_user_tokens_total",
			Help: "Signed end-user tokens by outcome: accepted, or the reason they were refused (expired, signature, audience, ...).",
		}, []string{"outcome"}),
		deleted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_dialogs_deleted_total",
			Help: "Dialogs deleted by reason: request (DELETE /dialogs/{dialog}), erasure (DELETE /end-users/{user_id}) or retention.",
		}, []string{"reason"}),
		closed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_dialogs_closed_total",
			Help: "Dialogs closed, by who closed them (bot: its end_dialog tool; person: an operator or the API).",
		}, []string{"by"}),
		notes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_memory_notes_total",
			Help: "Changes to the notes bots keep about end users, by operation: remembered, forgotten (by the model), deleted (through the API), erased (with the end user) or expired (retention).",
		}, []string{"op"}),
		trials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_tool_trials_total",
			Help: "HTTP tool calls sent by the admin UI's request tester (POST /tools/try), by outcome (ok or error); not counted as dialog tool calls.",
		}, []string{"outcome"}),
		feedback: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_feedback_total",
			Help: "Ratings end users gave replies, by rating (up or down); a changed rating counts again.",
		}, []string{"rating"}),
		agentRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_agent_runs_total",
			Help: "Sub-runs of agents called as tools, by outcome: the sub-run's stop reason, or refused (a cycle, too deep, no such published bot).",
		}, []string{"outcome"}),
		skillLoads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_skill_loads_total",
			Help: "load_skill calls by outcome: ok (a skill was loaded) or error (no such skill).",
		}, []string{"outcome"}),
		handoffs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_handoffs_total",
			Help: "Human handoffs by event: requested (the bot handed off), taken (an operator took one), released (back to the bot).",
		}, []string{"event"}),
		guardrails: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_guardrail_fires_total",
			Help: "Guardrail rules fired, by rule (blocked_topic, max_length, moderation, prompt_injection) and where (input, output, tool_output).",
		}, []string{"rule", "where"}),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_dialog_outcomes_total",
			Help: "Dialog outcomes computed as dialogs closed or went idle: resolved, handed_off, abandoned or failed.",
		}, []string{"outcome"}),
		toTake: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "parley_handoff_wait_seconds",
			Help:    "How long handed-off dialogs waited until an operator took them.",
			Buckets: []float64{5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600},
		}),
		knowledgeSearches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_knowledge_searches_total",
			Help: "Searches bots made of their knowledge bases, by mode (tool: search_knowledge; auto: before a model call) and outcome (ok, error, quota).",
		}, []string{"mode", "outcome"}),
		operatorResponse: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "parley_operator_first_response_seconds",
			Help:    "How long handed-off dialogs waited from the handoff to an operator's first message.",
			Buckets: []float64{5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600},
		}),
		operatorReply: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "parley_operator_reply_seconds",
			Help:    "How long end users' messages in handed-off dialogs waited for an operator's answer.",
			Buckets: []float64{5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600},
		}),
	}
	if reg != nil {
		m.llmSeconds = register(reg, m.llmSeconds)
		m.llmTokens = register(reg, m.llmTokens)
		m.toolCalls = register(reg, m.toolCalls)
		m.toolSecs = register(reg, m.toolSecs)
		m.runs = register(reg, m.runs)
		m.userTokens = register(reg, m.userTokens)
		m.deleted = register(reg, m.deleted)
		m.dialogs = register(reg, m.dialogs)
		m.closed = register(reg, m.closed)
		m.notes = register(reg, m.notes)
		m.trials = register(reg, m.trials)
		m.feedback = register(reg, m.feedback)
		m.agentRuns = register(reg, m.agentRuns)
		m.skillLoads = register(reg, m.skillLoads)
		m.handoffs = register(reg, m.handoffs)
		m.guardrails = register(reg, m.guardrails)
		m.toTake = register(reg, m.toTake)
		m.knowledgeSearches = register(reg, m.knowledgeSearches)
		m.operatorResponse = register(reg, m.operatorResponse)
		m.operatorReply = register(reg, m.operatorReply)
		m.outcomes = register(reg, m.outcomes)
	}
	return m
}

// register adds c to reg, or returns the collector already registered
// under its name, so two runtimes may share one registry.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
	}
	return c
}

// userToken counts one signed user token by outcome.
func (m *runtimeMetrics) userToken(outcome string) { m.userTokens.WithLabelValues(outcome).Inc() }

// toolCall counts one recorded tool result.
func (m *runtimeMetrics) toolCall(msg agent.Message) {
	res := msg.ToolResult()
	if res == nil {
		return
	}
	kind, outcome := "unknown", "ok"
	if msg.Tool != nil && msg.Tool.Kind != "" {
		kind = msg.Tool.Kind
	}
	switch {
	case msg.Tool != nil && msg.Tool.Skipped:
		outcome = "skipped"
	case res.IsError:
		outcome = "error"
	}
	m.toolCalls.WithLabelValues(kind, outcome).Inc()
	if kind == "skill" {
		m.skillLoads.WithLabelValues(outcome).Inc()
	}
	// Skipped and client calls did not run here: their time is not ours.
	if outcome != "skipped" && kind != "client" && msg.Tool != nil {
		m.toolSecs.WithLabelValues(kind, outcome).Observe(float64(msg.Tool.DurationMS) / 1000)
	}
}

// metered wraps every provider in a meteredProvider.
func (ps Providers) metered(m *runtimeMetrics, catalog *llm.Catalog) Providers {
	if ps == nil {
		return nil
	}
	out := make(Providers, len(ps))
	for name, p := range ps {
		out[name] = meteredProvider{Provider: p, m: m, catalog: catalog}
	}
	return out
}

// meteredProvider times every model call and counts its tokens.
type meteredProvider struct {
	llm.Provider
	m       *runtimeMetrics
	catalog *llm.Catalog
	// label names the provider in metrics; "" uses its Name. Tenants name
	// their own providers, so theirs are labelled by kind to keep the
	// label set bounded.
	label string
}

// Complete implements llm.Provider.
func (p meteredProvider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	start := time.Now()
	resp, err := p.Provider.Complete(ctx, req)
	p.observe(req.Model, time.Since(start), resp, err)
	return resp, err
}

// Stream implements llm.Provider.
func (p meteredProvider) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	start := time.Now()
	resp, err := p.Provider.Stream(ctx, req, onDelta)
	p.observe(req.Model, time.Since(start), resp, err)
	return resp, err
}

func (p meteredProvider) observe(model string, took time.Duration, resp *llm.Response, err error) {
	label := "other"
	if info, ok := p.catalog.Lookup(model); ok {
		label = info.Name
	}
	name, outcome := p.Name(), "ok"
	if p.label != "" {
		name = p.label
	}
	if err != nil {
		outcome = "error"
	}
	p.m.llmSeconds.WithLabelValues(name, label, outcome).Observe(took.Seconds())
	if resp != nil {
		p.m.llmTokens.WithLabelValues(name, label, "input").Add(float64(resp.Usage.InputTokens))
		p.m.llmTokens.WithLabelValues(name, label, "output").Add(float64(resp.Usage.OutputTokens))
	}
}
