package dialog

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/botrun"
	"github.com/parleyhq/parley/pkg/knowledge/cite"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/tool"
	"github.com/parleyhq/parley/pkg/tool/builtin"
	"github.com/parleyhq/parley/pkg/tool/toolbox"
	"github.com/parleyhq/parley/pkg/webhook"
)

// dialogRun is one request's run of a dialog's loop: it holds the lease,
// builds the agent, persists what the loop produces and saves the state.
type dialogRun struct {
	r      *Runtime
	p      *platform.Principal
	dialog *store.Dialog
	bot    *botconfig.Bot
	lr     *liveRun
	view   *endUserView // what the caller may see of tool calls; nil sees all
	cfg    agent.Config
	st     agent.State
	// memory holds the remember/recall notes, saved with the state.
	memory *builtin.MapMemory
	// clientTools are the request's own client tools (SendInput).
	clientTools []tool.Definition
	// book numbers the knowledge passages the run's searches found (its
	// agents' too); markers finds their citations in the streamed reply.
	book    *cite.Book
	markers *cite.Markers
	// knowledge is the bot's knowledge in the run, nil without any.
	knowledge *runKnowledge
	// closing is the reason end_dialog gave, nil until it is called.
	closing atomic.Pointer[string]
	// guard applies the bot's guardrails (guardrails.go).
	guard *guard

	ctx    context.Context
	cancel context.CancelFunc
	unhook func() bool // detaches cancel from Runtime.base
	// rec is where the run's persistence stands: its lease, its reply's
	// row and the events that wait for its write.
	rec *runRecord

	turn Turn
	// hookMessages says the tenant has an endpoint for message.created:
	// the run's messages are then written with their events.
	hookMessages bool
	// first is the request's own text, stored with the lease; nil when
	// the request resumes a paused dialog, or when its text was stored
	// already, by a request with its Idempotency-Key that died.
	first *store.Message
	// clean says the history the run loaded had no row left queued: with
	// the last seq the run saw, it lets its end keep the history for the
	// dialog's next turn (remember).
	clean bool
	// startedAt and firstTextAt time the reply for analytics: when the
	// run started, and when its first text arrived.
	startedAt, firstTextAt time.Time
}

// start prepares a run once the caller is the dialog's runner in this
// process (join): it takes the dialog's lease, storing the request's text
// (if any) with it and getting the dialog as the last holder left it, then
// loads its version and state and the agent's configuration.
func (r *Runtime) start(ctx context.Context, p *platform.Principal, d *store.Dialog, lr *liveRun, sink agent.Sink, in SendInput) (*dialogRun, error) {
	run := &dialogRun{r: r, p: p, lr: lr, rec: newRunRecord(r.store, r.log, r.now, lr.owner), clientTools: in.ClientTools,
		turn: Turn{DialogID: d.ID, Messages: []Message{}}}
	run.startedAt = r.now()
	run.ctx, run.cancel = r.Dialogs().stoppable(ctx, lr)
	run.unhook = context.AfterFunc(r.base, run.cancel)
	r.runs.Add(1)
	run.dialog = d // for end, which leaves the live entry even when loading fails
	if err := run.lease(ctx, d, in); err != nil {
		run.end()
		return nil, err
	}
	if err := run.load(ctx); err != nil {
		run.end()
		return nil, err
	}
	run.view = viewFor(p, run.bot)
	run.rec.sink = run.view.sink(sink)
	run.renew()
	run.rec.emit(DialogEvent{DialogID: d.ID})
	return run, nil
}

// lease takes the dialog's lease, storing text (if any) with it, and
// keeps the dialog as the lease found it. Whoever streamed before us is
// gone: taking the lease leaves their half-written replies visible as
// interrupted rather than alive forever.
func (run *dialogRun) lease(ctx context.Context, d *store.Dialog, in SendInput) error {
	r := run.r
	take := store.Take{TenantID: d.TenantID, DialogID: d.ID, BotID: leaseBot(run.p), Owner: run.lr.owner,
		Now: r.now(), TTL: r.opts.LeaseTTL}
	var err error
	if run.hookMessages, err = r.svc.Webhooks().Subscribes(ctx, d.TenantID, webhook.MessageCreated); err != nil {
		return r.internal(ctx, "run: webhooks", err)
	}
	// With an endpoint for message.created the text is stored after the
	// lease, with its event (storeFirst): the lease's own statement
	// carries no event.
	if in.Text != "" && !run.hookMessages {
		m, err := r.userRow(ctx, d, in.Text, in.images...)
		if err != nil {
			return err
		}
		m.ID = in.MessageID // "" gets a new id
		take.First = m
		// The loop answers a new text with a model call first: its reply's
		// row costs nothing stored with the lease (in an active dialog;
		// a paused one answers tool results first, and stores none).
		take.Reply = &store.Message{Kind: string(agent.KindAssistant), Role: string(llm.RoleAssistant), CreatedAt: r.now()}
	}
	d, err = r.store.Tenant(take.TenantID).Leases().Take(ctx, take)
	switch {
	case errors.Is(err, store.ErrConflict):
		return errBusy()
	case errors.Is(err, store.ErrInactive):
		return &inactiveDialog{dialog: d}
	case err != nil:
		return r.storeErr(ctx, "run: take lease", "dialog", err)
	}
	if err := run.rec.leased(d, take.Reply); err != nil {
		return r.internal(ctx, "run: take lease", err)
	}
	run.rec.saveRun = run.saveRun
	if run.hookMessages {
		run.rec.writeAnnounced = func(ctx context.Context, row *store.Message, write func(st *store.Store) error) error {
			return r.writeMessage(ctx, true, d, row, write)
		}
	}
	if in.Text != "" && run.hookMessages {
		if take.First, err = run.storeFirst(ctx, d, in); err != nil {
			return err
		}
	}
	run.dialog, run.first = d, take.First
	if take.First != nil && take.First.Seq == 0 {
		run.first = nil // stored already by a request that died: the run answers it (SendMessage)
	}
	r.mu.Lock()
	run.lr.dialog = d
	r.mu.Unlock()
	return nil
}

// saveRun is the run's save; the save that hands the dialog off writes
// dialog.handoff_requested with it, when the tenant has an endpoint for
// it. Every other save is the one statement SaveRun makes it.
func (run *dialogRun) saveRun(ctx context.Context, sv store.Save) (int64, error) {
	d := run.dialog
	if sv.Status != DialogHandoff || d.Status == DialogHandoff {
		return run.r.store.Tenant(sv.TenantID).Dialogs().SaveRun(ctx, sv)
	}
	var lastSeq int64
	ev := platform.Event{TenantID: d.TenantID, BotID: d.BotID, DialogID: d.ID, Type: webhook.DialogHandoffRequested}
	err := run.r.svc.Webhooks().WithEvent(ctx, ev, func(st *store.Store) (any, error) {
		// The dialog joins the operators' inbox in the commit that hands
		// it off: never handed off without a place in the queue.
		err := st.Tx(ctx, func(tx *store.Store) error {
			var err error
			if lastSeq, err = tx.Tenant(sv.TenantID).Dialogs().SaveRun(ctx, sv); err != nil {
				return err
			}
			return tx.Tenant(d.TenantID).Handoffs().Request(ctx, d.ID, run.r.now())
		})
		return handoffRequestedData{DialogID: d.ID, BotID: d.BotID, Reason: handoffReason(run.st.Messages)}, err
	})
	if err == nil {
		run.r.metrics.handoffs.WithLabelValues("requested").Inc()
	}
	return lastSeq, err
}

// storeFirst stores the run's text once its lease is held, as TakeLease
// would have with it: complete, or queued in a paused dialog, which
// answers tool results first, under in.MessageID when the request has
// one. d's LastSeq then counts it, as after TakeLease. A text a request
// with the same Idempotency-Key stored before it died (with its event) is
// not stored again: its Seq is left 0, as TakeLease leaves it.
func (run *dialogRun) storeFirst(ctx context.Context, d *store.Dialog, in SendInput) (*store.Message, error) {
	r := run.r
	m, err := r.userRow(ctx, d, in.Text, in.images...)
	if err != nil {
		return nil, err
	}
	m.ID, m.Status = in.MessageID, store.MessageComplete
	if d.Status == store.DialogPaused {
		m.Status = store.MessageQueued
	}
	err = r.writeMessage(ctx, true, d, m, func(st *store.Store) error { return st.Tenant(m.TenantID).Messages().Append(ctx, m) })
	switch {
	case errors.Is(err, store.ErrConflict) && in.MessageID != "":
		m.Seq = 0
		return m, nil
	case err != nil:
		return nil, r.internal(ctx, "store user message", err)
	}
	d.LastSeq = max(d.LastSeq, m.Seq)
	run.rec.saw(m)
	return m, nil
}

// load reads what the run needs of the dialog it leased: its compiled
// bot, state and history, and the agent's configuration with its tools.
func (run *dialogRun) load(ctx context.Context) error {
	r, d := run.r, run.dialog
	var err error
	if run.bot, err = r.botFor(ctx, d); err != nil {
		return err
	}
	saved, clean, err := r.state(ctx, d, run.first)
	if err != nil {
		return r.internal(ctx, "run: state", err)
	}
	run.st, run.clean = saved.State, clean
	run.memory = builtin.NewMemory()
	for k, v := range saved.Memory {
		if err := run.memory.Set(ctx, k, v); err != nil {
			return r.internal(ctx, "run: memory", err)
		}
	}
	vars, err := r.vars(ctx, d, run.bot)
	if err != nil {
		return err
	}
	userMem, recalled, err := r.recall(ctx, d, run.bot)
	if err != nil {
		return err
	}
	run.book = cite.NewBookAfter(lastMarker(run.st.Messages))
	run.markers = cite.NewMarkers(run.book)
	kn, err := r.knowledgeFor(ctx, run.p, d, run.bot, run.book)
	if err != nil {
		return err
	}
	run.knowledge = kn
	// The request made the guard when it masked its text; a resume or a
	// retry makes it here.
	if run.guard = guardFrom(run.ctx); run.guard == nil || run.guard.dialogID != d.ID {
		run.guard = r.newGuard(d, run.bot)
		run.ctx = withGuard(run.ctx, run.guard)
	}
	box, err := toolbox.Build(ctx, run.bot, toolbox.Options{TenantID: d.TenantID, Vars: vars, Guard: run.guard.wrap,
		HTTPClient: r.opts.HTTPClient, HTTP: r.opts.HTTP, MCP: r.opts.MCP, Natives: r.opts.Natives,
		Native:  builtin.Env{Now: r.opts.Clock, Memory: run.memory, EndDialog: run.endDialog},
		Schemas: r.schemas, ClientTools: run.clientTools, UserMemory: userMem, Agents: run.rootAgentTools(), Knowledge: kn.tools()})
	if err != nil {
		return r.internal(ctx, "run: tools", err)
	}
	for _, w := range box.Warnings {
		r.log.WarnContext(ctx, "dialog: dialog runs without some tools", "dialog", d.ID, "warning", w)
	}
	resolver, err := r.resolverFor(ctx, d.TenantID, run.bot)
	if err != nil {
		return err
	}
	run.cfg = r.agentConfig(run.bot, vars, r.Images().imageAware(run.bot, resolver), box.Set, agent.Hooks{
		OnMessage: run.onMessage, OnTurnEnd: run.onTurnEnd, OnError: run.onError, BeforeModelCall: kn.hook(),
	}, agent.SinkFunc(run.onEvent))
	if recalled != "" {
		run.cfg.System += "\n\n" + recalled
	}
	if run.bot.Guardrails.Screens() {
		run.cfg.Guard = run.guard
	}
	return nil
}

// vars are the dialog's template variables: system variables, the
// context (with the bot's defaults) and the tenant's secrets.
func (r *Runtime) vars(ctx context.Context, d *store.Dialog, bot *botconfig.Bot) (botconfig.Vars, error) {
	given := map[string]string{}
	if err := json.Unmarshal([]byte(d.Context), &given); err != nil {
		return nil, r.internal(ctx, "run: context", err)
	}
	return r.varsFor(ctx, d.TenantID, bot, botconfig.Vars{
		"dialog_id": d.ID, "tenant_id": d.TenantID, "bot_id": d.BotID, "chatbot_id": bot.ChatbotID,
		"user_id": d.UserID, "channel": d.Channel, "locale": "en", "now": r.now().Format(time.RFC3339),
	}, given)
}

// varsFor adds to the system variables the bot's context defaults, the
// given context and the tenant secrets the bot uses.
func (r *Runtime) varsFor(ctx context.Context, tenantID string, bot *botconfig.Bot, vars botconfig.Vars, given map[string]string) (botconfig.Vars, error) {
	for _, cv := range bot.ContextVariables {
		if cv.Default != "" {
			vars[cv.Name] = cv.Default
		}
	}
	for k, v := range given {
		vars[k] = v
	}
	secrets, err := r.svc.Secrets().Vars(ctx, tenantID, slices.Collect(maps.Keys(bot.SecretDestinations())))
	if err != nil {
		return nil, err
	}
	for k, v := range secrets {
		vars[k] = v
	}
	return vars, nil
}

func (r *Runtime) agentConfig(bot *botconfig.Bot, vars botconfig.Vars, resolver agent.ProviderResolver, tools *tool.Set, hooks agent.Hooks, sink agent.Sink) agent.Config {
	cfg := botrun.Config(bot, vars, resolver, tools)
	cfg.Hooks, cfg.Sink, cfg.Now = hooks, sink, r.opts.Clock
	return cfg
}

// resolverFor is the resolver of the tenant's bot as it stands now: its
// providers, and its quota downgrade when the tenant nears its quota.
func (r *Runtime) resolverFor(ctx context.Context, tenantID string, bot *botconfig.Bot) (agent.ProviderResolver, error) {
	providers, err := r.providersFor(ctx, tenantID, bot)
	if err != nil {
		return nil, err
	}
	models, err := r.Quotas().quotaBot(ctx, tenantID, bot)
	if err != nil {
		return nil, err
	}
	return r.resolver(models, providers), nil
}

// resolver uses the bot's model (or the server's default), then its
// fallback models after retryable failures, each with its catalog window.
func (r *Runtime) resolver(bot *botconfig.Bot, providers Providers) agent.ProviderResolver {
	if r.opts.Provider == nil && len(providers) == 0 {
		// The user's text is stored all the same; the reply is an error
		// event saying no model is available.
		return agent.ResolverFunc(func(context.Context, agent.ResolveInfo) (agent.Choice, error) {
			return agent.Choice{}, errNoProvider
		})
	}
	return BotResolver(r.opts.Provider, providers, r.opts.Catalog, r.opts.DefaultModel, bot)
}

// renew keeps the lease while the run lasts; losing it (this process
// stalled past the TTL and another took over) cancels the run, so two
// loops never write to one dialog. The timer stops when the run's context
// ends.
func (run *dialogRun) renew() {
	every := run.r.opts.LeaseTTL / 3
	var mu sync.Mutex // orders the timer's creation before its first use
	mu.Lock()
	defer mu.Unlock()
	var t *time.Timer
	t = time.AfterFunc(every, func() {
		if run.renewOnce() {
			mu.Lock()
			t.Reset(every)
			mu.Unlock()
		}
	})
	context.AfterFunc(run.ctx, func() {
		mu.Lock()
		t.Stop()
		mu.Unlock()
	})
}

// renewOnce extends the lease and reports whether the run goes on.
func (run *dialogRun) renewOnce() bool {
	r, d := run.r, run.dialog
	if run.ctx.Err() != nil || !run.rec.holdsLease() {
		return false // the run ended, or its last save gave the lease up
	}
	err := r.store.Tenant(d.TenantID).Leases().Renew(run.ctx, d.ID, run.lr.owner, r.now(), r.opts.LeaseTTL)
	if err != nil && run.ctx.Err() != nil {
		return false // the run ended while renewing
	}
	if err != nil {
		r.log.Error("dialog: dialog lease lost; stopping its run", "dialog", d.ID, "err", err)
		run.cancel()
		return false
	}
	return true
}

// exec runs act, then the texts that arrived too late for it, and saves
// the state after each. sends says act sends the first queued text itself
// (the request's own), so only the texts after it are steered in.
func (run *dialogRun) exec(sends bool, act func(*agent.Agent) (agent.Outcome, error)) (Turn, error) {
	r := run.r
	for {
		a, err := agent.New(run.cfg)
		if err != nil {
			return run.turn, r.internal(run.ctx, "run: agent", err)
		}
		r.mu.Lock()
		run.lr.agent = a
		steer := run.lr.queue
		if sends && len(steer) > 0 {
			steer = steer[1:]
		}
		for _, q := range steer {
			a.Steer(q.text)
		}
		r.mu.Unlock()
		out, runErr := act(a)
		run.countFailure(out)
		if v := run.guard.verdict(); v != nil && run.guard.ends(out) {
			run.endDialog("guardrail " + v.Rule + " fired on the " + v.Where)
		}
		if err := run.rec.loopEnded(context.WithoutCancel(run.ctx), cutStatus(out)); err != nil {
			return run.turn, r.internal(run.ctx, "run: loop ended", err)
		}
		run.closeEnded()
		// Deciding first whether the run goes on lets its last save
		// release the lease in the same commit; once closed, no text can
		// join, so nothing is left for a released run to answer.
		next, ok := run.leftover(out)
		lastSeq, err := run.save(out, !ok)
		if err != nil {
			return run.turn, err
		}
		if runErr != nil {
			r.log.WarnContext(run.ctx, "dialog: dialog run stopped with an error", "dialog", run.dialog.ID, "err", runErr)
		}
		if !ok {
			run.remember(out, runErr, lastSeq)
			run.countReply()
			return run.turn, nil
		}
		act = func(a *agent.Agent) (agent.Outcome, error) { return a.Send(run.ctx, &run.st, next) }
		sends = true
	}
}

// leftover returns a text queued after the loop last looked, to answer
// next; a run that paused or handed off leaves it stored, unanswered.
// Without one the run closes to new texts in the same critical section,
// so none can join after the last look.
func (run *dialogRun) leftover(out agent.Outcome) (string, bool) {
	run.r.mu.Lock()
	defer run.r.mu.Unlock()
	run.lr.agent = nil
	if len(run.lr.queue) == 0 || run.ctx.Err() != nil || out.StopReason == agent.StopHandoff || run.guard.handsOff(out) || run.closing.Load() != nil {
		if run.lr.open {
			run.lr.setOpen(false)
		}
		return "", false
	}
	return run.lr.queue[0].text, true
}

// save stores the loop state (without messages, which are rows) and the
// dialog status the outcome implies; last also releases the lease with it
// and returns the dialog's last_seq at that moment.
func (run *dialogRun) save(out agent.Outcome, last bool) (int64, error) {
	status := DialogActive
	switch out.StopReason {
	case agent.StopPaused:
		status = DialogPaused
	case agent.StopHandoff:
		status = DialogHandoff
	case agent.StopGuardrail:
		if run.guard.handsOff(out) {
			status = DialogHandoff
		}
	}
	ctx := context.WithoutCancel(run.ctx)
	saved := savedState{State: run.st}
	saved.Messages = nil
	notes, err := run.memory.All(ctx)
	if err != nil {
		return 0, run.r.internal(ctx, "save memory", err)
	}
	if len(notes) > 0 {
		saved.Memory = notes
	}
	b, err := json.Marshal(saved)
	if err != nil {
		return 0, run.r.internal(ctx, "save state", err)
	}
	lastSeq, err := run.rec.save(ctx, status, string(b), last)
	if errors.Is(err, store.ErrConflict) {
		return 0, platform.Wrap(err, platform.CodeConflict,
			"another server took this dialog over while the reply was generated; the reply was not saved")
	}
	if err != nil {
		return 0, run.r.internal(ctx, "save state", err)
	}
	run.dialog.Status = status
	run.turn.Pending = nil
	for _, pc := range out.Pending {
		run.turn.Pending = append(run.turn.Pending, PendingCall{ID: pc.ID, Name: pc.Name, Arguments: pc.Arguments, Kind: pc.Kind})
	}
	return lastSeq, nil
}

// remember keeps the run's history for the dialog's next turn, when it is
// exactly the dialog's complete rows: the run ended without an error (a
// failed write may have left a row behind its history), no text is left
// queued, and the dialog's last_seq as the last save left it (lastSeq) is
// the last row the run saw, so nothing was written that it missed.
func (run *dialogRun) remember(out agent.Outcome, runErr error, lastSeq int64) {
	run.r.mu.Lock()
	queued := len(run.lr.queue) > 0
	run.r.mu.Unlock()
	if !run.clean || queued || runErr != nil || out.StopReason == agent.StopError || run.ctx.Err() != nil || lastSeq != run.rec.lastSeq {
		return
	}
	d := run.dialog
	run.r.history.put(d.TenantID, d.ID, lastSeq, run.st.Messages)
}

// end releases the lease (unless the last save did), then the dialog's
// live entry: a request that arrives meanwhile waits for the entry to go
// and then takes the lease itself, instead of finding it still held and
// answering 409.
func (run *dialogRun) end() {
	run.cancel()
	run.unhook()
	r := run.r
	defer r.runs.Done()
	r.mu.Lock()
	if run.lr.open {
		run.lr.setOpen(false)
	}
	r.mu.Unlock()
	if err := run.rec.end(context.WithoutCancel(run.ctx)); err != nil {
		r.log.Error("dialog: end run", "dialog", run.dialog.ID, "err", err)
	}
	r.leave(run.lr)
	// The dialog's live streams read what the run wrote: its reply, or
	// its handoff. Across processes the run's save told them already
	// (store.Dialogs.SaveRun), at no statement of its own.
	if !r.store.Signals().AcrossProcesses() {
		r.signals.deliver(run.dialog.TenantID, run.dialog.ID, signalChanged)
	}
}
