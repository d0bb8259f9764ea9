package dialog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/tool"
	"github.com/parleyhq/parley/pkg/tool/builtin"
	"github.com/parleyhq/parley/pkg/tool/toolbox"
	"github.com/parleyhq/parley/pkg/webhook"
)

// This file runs the bots a config lists in agents as tools. A call is a
// sub-run: the called bot's published version answers the model's input
// with its own prompt, tools and limits, in a dialog of its own linked to
// the calling dialog (ParentDialogID, ParentCallID). A dialog rather than
// messages nested in the caller's, because a sub-run is a whole
// conversation of another bot version: stored as one, the transcript
// shows it with the existing dialog view (its own version on its replies,
// its own tool calls), erasing the user or the dialog takes it along, and
// the caller's history stays exactly what its model saw (the call and its
// result), so nothing on the caller's hot path has to skip foreign rows.

// agentCaller is what the agent tools of one level of a run share: the
// dialog's run, the dialog of this level and the chain of bots above it.
type agentCaller struct {
	run *dialogRun
	// dialog is this level's dialog: the run's, or a sub-run's.
	dialog *store.Dialog
	// botIDs are the bots from the dialog's down to this level's, for
	// spotting a cycle; path names this level in events ("" at the top).
	botIDs []string
	path   string
	// maxDepth is the dialog's bot's max_agent_depth: it bounds the
	// whole tree.
	maxDepth int
	// sink takes this level's sub-runs' events.
	sink agent.Sink
}

// agentTools returns the bot's agents entries as tools of caller's level;
// nil when it has none, so a bot without agents builds nothing.
func agentTools(c *agentCaller, specs []botconfig.AgentSpec) []tool.Tool {
	if len(specs) == 0 {
		return nil
	}
	out := make([]tool.Tool, len(specs))
	for i, s := range specs {
		out[i] = &agentTool{spec: s, caller: c}
	}
	return out
}

// rootAgentTools are the agent tools of a dialog's run, whose events go to
// the run's sink. Sub-runs of parallel calls send concurrently; the lock
// keeps their events whole and in order per sub-run.
func (run *dialogRun) rootAgentTools() []tool.Tool {
	if len(run.bot.Agents) == 0 {
		return nil
	}
	c := &agentCaller{run: run, dialog: run.dialog, botIDs: []string{run.dialog.BotID},
		maxDepth: run.bot.Runtime.MaxAgentDepth, sink: &lockedSink{next: agent.SinkFunc(run.onEvent)}}
	return agentTools(c, run.bot.Agents)
}

type lockedSink struct {
	mu   sync.Mutex
	next agent.Sink
}

func (s *lockedSink) Send(e agent.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next.Send(e)
}

// agentTool is one agents entry: calling it runs the bot as a sub-run.
type agentTool struct {
	spec   botconfig.AgentSpec
	caller *agentCaller
}

func (t *agentTool) Definition() tool.Definition {
	return tool.Definition{Name: t.spec.Name, Description: t.spec.Description, Parameters: botconfig.AgentInputSchema}
}

// TakesCallID implements tool.CallIDTaker: the sub-run's dialog and
// events name the call.
func (*agentTool) TakesCallID() bool { return true }

// Call runs the sub-run. Whatever goes wrong is a result the calling
// model reads; only the sub-run's own answer is not an error.
func (t *agentTool) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	c, r := t.caller, t.caller.run.r
	var in struct {
		Input string `json:"input"`
	}
	_ = json.Unmarshal(args, &in) // validated against AgentInputSchema
	sub, refusal, err := c.prepare(ctx, t.spec, tool.CallID(ctx))
	switch {
	case err != nil:
		r.log.ErrorContext(ctx, "dialog: start agent", "dialog", c.dialog.ID, "agent", t.spec.Bot, "err", err)
		r.metrics.agentRuns.WithLabelValues("refused").Inc()
		return agentResult(tool.Errorf("agent " + t.spec.Name + " could not be started")), nil
	case refusal != "":
		r.metrics.agentRuns.WithLabelValues("refused").Inc()
		return agentResult(tool.Errorf(refusal)), nil
	}
	return agentResult(sub.answer(ctx, in.Input)), nil
}

func agentResult(res tool.Result) tool.Result {
	res.Meta.Kind = "agent"
	return res
}

// subRun is one call of an agent: its bot, dialog and loop configuration.
type subRun struct {
	c      *agentCaller
	spec   botconfig.AgentSpec
	callID string
	bot    *botconfig.Bot
	dialog *store.Dialog
	// level is what the sub-run's own agent tools share.
	level *agentCaller
	cfg   agent.Config
	// hookMessages says the tenant has an endpoint for message.created.
	hookMessages bool
	// guard applies the called bot's own guardrails.
	guard *guard
}

// prepare checks the call may run (no cycle, not too deep, a published
// bot of the tenant) and builds its sub-run; a refusal is the text the
// model reads.
func (c *agentCaller) prepare(ctx context.Context, spec botconfig.AgentSpec, callID string) (*subRun, string, error) {
	r, tenantID := c.run.r, c.dialog.TenantID
	if depth := len(c.botIDs); depth > c.maxDepth {
		return nil, fmt.Sprintf("agent %s cannot be called here: agents may nest at most %d deep (runtime.max_agent_depth)", spec.Name, c.maxDepth), nil
	}
	b, err := r.store.Tenant(tenantID).Bots().Get(ctx, spec.Bot)
	switch {
	case errors.Is(err, store.ErrNotFound) || (err == nil && b.Slug != spec.Bot):
		return nil, fmt.Sprintf("agent %s is not available: the bot %q does not exist", spec.Name, spec.Bot), nil
	case err != nil:
		return nil, "", err
	case slices.Contains(c.botIDs, b.ID):
		return nil, fmt.Sprintf("agent %s cannot be called here: it is already running in this chain of agents, and calling it again would loop", spec.Name), nil
	case b.PublishedVersion == 0:
		return nil, fmt.Sprintf("agent %s is not available: the bot %q has no published version", spec.Name, spec.Bot), nil
	}
	v, err := r.store.Tenant(tenantID).Versions().Get(ctx, b.ID, b.PublishedVersion)
	if err != nil {
		return nil, "", err
	}
	sub := &subRun{c: c, spec: spec, callID: callID}
	if sub.bot, err = r.compiled(ctx, v); err != nil {
		return nil, "", err
	}
	// The sub-run's dialog is closed from the start: it is written by
	// this call only, and no one may send it messages.
	sub.dialog = &store.Dialog{TenantID: tenantID, BotID: b.ID, VersionNumber: v.Number, UserID: c.dialog.UserID,
		Channel: c.dialog.Channel, Context: c.dialog.Context, Status: DialogClosed, ClosedReason: "agent call",
		ParentDialogID: c.dialog.ID, ParentCallID: callID, CreatedAt: r.now(), UpdatedAt: r.now()}
	if err := r.store.Tenant(sub.dialog.TenantID).Dialogs().Create(ctx, sub.dialog); err != nil {
		return nil, "", err
	}
	sub.level = &agentCaller{run: c.run, dialog: sub.dialog, botIDs: append(slices.Clip(c.botIDs), b.ID),
		path: joinPath(c.path, spec.Name), maxDepth: c.maxDepth}
	sub.level.sink = nestingSink{agent: sub.level.path, next: c.sink}
	if err := sub.configure(ctx); err != nil {
		return nil, "", err
	}
	return sub, "", nil
}

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "/" + name
}

// configure builds the sub-run's loop as a dialog's run builds its own:
// the bot's variables, tools, providers and limits, with hooks that store
// its messages in its dialog and meter its calls on its bot.
func (sub *subRun) configure(ctx context.Context) error {
	r, d := sub.c.run.r, sub.dialog
	vars, err := r.vars(ctx, d, sub.bot)
	if err != nil {
		return err
	}
	if sub.hookMessages, err = r.svc.Webhooks().Subscribes(ctx, d.TenantID, webhook.MessageCreated); err != nil {
		return err
	}
	// The agent searches its own bases for the same end user, numbering
	// into the caller's run, so the caller may cite what it found.
	kn, err := r.knowledgeFor(ctx, sub.c.run.p, d, sub.bot, sub.c.run.book)
	if err != nil {
		return err
	}
	sub.guard = r.newGuard(d, sub.bot)
	box, err := toolbox.Build(ctx, sub.bot, toolbox.Options{TenantID: d.TenantID, Vars: vars,
		HTTPClient: r.opts.HTTPClient, HTTP: r.opts.HTTP, MCP: r.opts.MCP, Natives: r.opts.Natives,
		Native:  builtin.Env{Now: r.opts.Clock, Memory: builtin.NewMemory(), EndDialog: func(string) {}},
		Schemas: r.schemas, Agents: agentTools(sub.level, sub.bot.Agents), Knowledge: kn.tools(), Guard: sub.guard.wrap})
	if err != nil {
		return err
	}
	resolver, err := r.resolverFor(ctx, d.TenantID, sub.bot)
	if err != nil {
		return err
	}
	key := sub.c.run.p.KeyID
	sub.cfg = r.agentConfig(sub.bot, vars, resolver, box.Set, agent.Hooks{
		OnMessage: sub.store,
		OnTurnEnd: func(ctx context.Context, info agent.TurnInfo) (bool, error) { return r.meterTurn(ctx, d, key, info) },
		OnError: func(ctx context.Context, err error) {
			r.log.WarnContext(ctx, "dialog: agent run error", "dialog", d.ID, "err", err)
		},
		BeforeModelCall: kn.hook(),
	}, sub.level.sink)
	if sub.bot.Guardrails.Screens() {
		sub.cfg.Guard = sub.guard
	}
	return nil
}

// answer runs the sub-run on input and returns its answer as the tool's
// result, telling the caller's stream where it starts and ends.
func (sub *subRun) answer(ctx context.Context, input string) tool.Result {
	r, d := sub.c.run.r, sub.dialog
	sub.c.sink.Send(AgentStart{Agent: sub.level.path, Bot: sub.spec.Bot, CallID: sub.callID, DialogID: d.ID})
	var st agent.State
	out, runErr := agent.Outcome{StopReason: agent.StopError}, error(nil)
	a, err := agent.New(sub.cfg)
	if err == nil {
		// The called bot masks with its own guardrails and vault.
		ctx = withGuard(ctx, sub.guard)
		if input, err = sub.guard.mask(ctx, input); err == nil {
			out, runErr = a.Send(ctx, &st, input)
		} else {
			runErr = err
		}
	} else {
		runErr = err
	}
	if runErr != nil {
		r.log.WarnContext(ctx, "dialog: agent run stopped with an error", "dialog", d.ID, "err", runErr)
	}
	st.Messages = nil
	if b, err := json.Marshal(savedState{State: st}); err == nil {
		if err := r.store.Tenant(d.TenantID).Dialogs().SaveState(context.WithoutCancel(ctx), d.ID, DialogClosed, string(b)); err != nil {
			r.log.ErrorContext(ctx, "dialog: save agent state", "dialog", d.ID, "err", err)
		}
	}
	r.metrics.agentRuns.WithLabelValues(string(out.StopReason)).Inc()
	sub.c.sink.Send(AgentEnd{Agent: sub.level.path, CallID: sub.callID, DialogID: d.ID, StopReason: out.StopReason,
		Text: out.Text, Turns: out.Turns, Usage: out.Usage})
	return sub.result(out)
}

// result is what the calling model reads of the outcome.
func (sub *subRun) result(out agent.Outcome) tool.Result {
	name := sub.spec.Name
	switch out.StopReason {
	case agent.StopCompleted, agent.StopHandoff:
		if strings.TrimSpace(out.Text) == "" {
			return tool.Result{Content: "(agent " + name + " gave no answer)"}
		}
		return tool.Result{Content: out.Text}
	case agent.StopPaused:
		return tool.Errorf("agent " + name + " needs a client tool or a confirmation, which an agent call cannot hand over; do the task another way")
	case agent.StopError, agent.StopCanceled:
		return tool.Errorf("agent " + name + " failed before answering")
	}
	if strings.TrimSpace(out.Text) == "" {
		return tool.Errorf("agent " + name + " stopped (" + string(out.StopReason) + ") without an answer")
	}
	return tool.Result{Content: out.Text + "\n\n(agent " + name + " stopped early: " + string(out.StopReason) + ")"}
}

// store writes one of the sub-run's messages to its dialog, with the
// webhook events a dialog's messages and tool failures have.
func (sub *subRun) store(ctx context.Context, m agent.Message) error {
	r, d := sub.c.run.r, sub.dialog
	row, err := storeMessage(d, m)
	if err != nil {
		return err
	}
	if err := r.writeMessage(ctx, sub.hookMessages, d, row, func(st *store.Store) error { return st.Tenant(row.TenantID).Messages().Append(ctx, row) }); err != nil {
		return err
	}
	return storeToolCalls(ctx, r.store, row, m, func(ctx context.Context, c *store.ToolCall, name string, info *agent.ToolInfo) error {
		return r.putToolResult(ctx, d, c, name, info)
	})
}

// nestingSink marks a sub-run's events with its agent path on their way to
// the caller's sink. Its done and error events become the AgentEnd, and
// pause requests are the caller's to answer (as a tool error), so they
// are not passed on; events already marked, by a deeper sub-run, pass as
// they are.
type nestingSink struct {
	agent string
	next  agent.Sink
}

func (s nestingSink) Send(e agent.Event) {
	switch e.(type) {
	case agent.Done, agent.Error, agent.ClientToolRequest, agent.ConfirmationRequest:
		return
	case NestedEvent, AgentStart, AgentEnd:
		s.next.Send(e)
	default:
		s.next.Send(NestedEvent{Agent: s.agent, Event: e})
	}
}
