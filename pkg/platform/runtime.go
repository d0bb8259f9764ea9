package platform

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parleyhq/parley/configs"
	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/tool"
	"github.com/parleyhq/parley/pkg/tool/builtin"
	"github.com/parleyhq/parley/pkg/tool/httptool"
	"github.com/parleyhq/parley/pkg/tool/mcptool"
	"github.com/parleyhq/parley/pkg/tool/toolbox"
)

// RuntimeOptions are what running dialogs needs besides the Service: the
// model, the tools' network access and the limits.
type RuntimeOptions struct {
	// Provider answers every model call (the server's configured
	// OpenAI-compatible API). Without one, messages are stored and their
	// runs end with an error event saying no model is available.
	Provider llm.Provider
	// DefaultModel is used when a bot's config names none.
	DefaultModel string
	// Catalog gives context windows and prices; default configs.Models().
	Catalog *llm.Catalog
	// HTTPClient is the SSRF-safe client (outbound.NewClient) for HTTP
	// tools; default one with the default policy.
	HTTPClient *http.Client
	// HTTP tunes HTTP tools.
	HTTP httptool.Options
	// MCP is the process's MCP connection pool; nil leaves MCP tools out.
	MCP *mcptool.Pool
	// Natives resolves native tool names; default builtin.NewRegistry().
	Natives *builtin.Registry
	// Limits are the rate limits and the daily token quota.
	Limits Limits
	// LeaseTTL is how long a dialog's lease lasts without renewal (it is
	// renewed every third of it while the loop runs); default 1 minute. A
	// crashed server's dialogs are free again after it.
	LeaseTTL time.Duration
	// Owner names this process in leases; default host, pid and a random
	// suffix.
	Owner string
	// Metrics receives model latency and tokens, tool calls and runs by
	// stop reason; nil keeps them unexported.
	Metrics prometheus.Registerer
}

// Runtime runs dialogs: it creates and reads them and answers their
// messages with the agent loop, persisting every message as it is made,
// metering usage and enforcing limits. It is safe for concurrent use.
type Runtime struct {
	svc     *Service
	opts    RuntimeOptions
	metrics *runtimeMetrics
	limits  *limiter
	schemas *tool.SchemaCache
	bots    *botCache

	// base ends every run on Shutdown; runs do not end when their request
	// does, so a reply whose client went away is still stored.
	base     context.Context
	shutdown context.CancelFunc
	runs     sync.WaitGroup

	mu   sync.Mutex
	live map[string]*liveRun // dialog id -> the run of this process
}

// NewRuntime returns the dialog runtime over svc.
func NewRuntime(svc *Service, opts RuntimeOptions) (*Runtime, error) {
	if svc == nil {
		return nil, errors.New("platform: runtime needs a service")
	}
	if opts.Catalog == nil {
		c, err := llm.LoadCatalog(configs.Models())
		if err != nil {
			return nil, err
		}
		opts.Catalog = c
	}
	if opts.Natives == nil {
		opts.Natives = builtin.NewRegistry()
	}
	if opts.HTTPClient == nil {
		// Tenant URLs only ever go through the SSRF-safe client; without
		// the operator's exceptions it reaches public addresses only.
		opts.HTTPClient = outbound.NewClient(outbound.Policy{}, outbound.Options{})
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = time.Minute
	}
	if opts.Owner == "" {
		host, _ := os.Hostname()
		opts.Owner = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), randomHex(4))
	}
	metrics := newRuntimeMetrics(opts.Metrics)
	if opts.Provider != nil {
		opts.Provider = meteredProvider{Provider: opts.Provider, m: metrics, catalog: opts.Catalog}
	}
	base, cancel := context.WithCancel(context.Background())
	return &Runtime{svc: svc, opts: opts, metrics: metrics, limits: newLimiter(opts.Limits), schemas: tool.NewSchemaCache(),
		bots: newBotCache(256), base: base, shutdown: cancel, live: map[string]*liveRun{}}, nil
}

// Shutdown cancels every running loop (each stops with an error event and
// its state saved as far as it got) and waits for them up to ctx.
func (r *Runtime) Shutdown(ctx context.Context) error {
	r.shutdown()
	done := make(chan struct{})
	go func() { r.runs.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// SendInput is one user message.
type SendInput struct {
	Text string
	// Origin is the browser origin of the request, "" server to server.
	Origin string
}

// Turn is what one request to a dialog produced.
type Turn struct {
	DialogID string `json:"dialog_id"`
	// Messages are the messages stored by this request, in order.
	Messages []Message `json:"messages"`
	// Done ends every answered request; nil when the text was queued.
	Done *agent.Done `json:"done,omitempty"`
	// Error says why the run stopped with stop reason "error".
	Error *agent.Error `json:"error,omitempty"`
	// Pending are the calls the dialog now waits for.
	Pending []PendingCall `json:"pending,omitempty"`
	// Queued says the text joined a reply already being generated in this
	// dialog; that reply's stream carries the answer.
	Queued bool `json:"queued,omitempty"`
}

// SendMessage stores the user's text, then answers it with the loop,
// sending events to sink as they happen (sink may be nil). The text is
// stored before any model call, so a failing model never loses it. While
// another request of this process is answering the dialog, the text joins
// that run (steering); while another process is, it is a conflict.
func (r *Runtime) SendMessage(ctx context.Context, p *Principal, tenant, dialog string, in SendInput, sink agent.Sink) (Turn, error) {
	d, err := r.chatDialog(ctx, p, tenant, dialog, in.Origin)
	if err != nil {
		return Turn{}, err
	}
	if err := checkText(in.Text); err != nil {
		return Turn{}, err
	}
	if err := r.admit(ctx, p, d.TenantID); err != nil {
		return Turn{}, err
	}
	switch d.Status {
	case DialogClosed:
		return Turn{}, errorf(CodeConflict, "this dialog is closed; start a new one")
	case DialogHandoff:
		return r.storeForHuman(ctx, d, in.Text, sink)
	}
	lr, queued, err := r.join(ctx, d, in.Text)
	if err != nil || queued != nil {
		return Turn{DialogID: d.ID, Messages: msgList(queued), Queued: queued != nil}, err
	}
	run, err := r.start(ctx, p, d, lr, sink)
	if err != nil {
		return Turn{}, err
	}
	defer run.end()
	if err := run.queue(ctx, in.Text); err != nil {
		return Turn{}, err
	}
	return run.exec(func(a *agent.Agent) (agent.Outcome, error) { return a.Send(run.ctx, &run.st, in.Text) })
}

func msgList(m *store.Message) []Message {
	if m == nil {
		return []Message{}
	}
	return []Message{messageView(m)}
}

func checkText(text string) error {
	switch n := len([]rune(text)); {
	case len(text) == 0 || n == 0:
		return invalid(Detail{Pointer: "/text", Message: "is required"})
	case n > MaxMessageChars:
		return invalid(Detail{Pointer: "/text", Message: fmt.Sprintf("must have at most %d characters", MaxMessageChars)})
	}
	return nil
}

// storeForHuman keeps a message of a handed-off dialog without answering:
// a human agent reads it from the dialog.
func (r *Runtime) storeForHuman(ctx context.Context, d *store.Dialog, text string, sink agent.Sink) (Turn, error) {
	m, err := storeMessage(d, agent.Message{Kind: agent.KindUser, Message: llm.UserText(text), Time: r.svc.now()})
	if err != nil {
		return Turn{}, r.svc.internal(ctx, "handoff message", err)
	}
	if err := r.svc.store.AppendMessage(ctx, m); err != nil {
		return Turn{}, r.svc.internal(ctx, "handoff message", err)
	}
	done := &agent.Done{StopReason: agent.StopHandoff}
	if sink != nil {
		sink.Send(DialogEvent{DialogID: d.ID})
		sink.Send(MessageEvent{Message: messageView(m)})
		sink.Send(*done)
	}
	return Turn{DialogID: d.ID, Messages: []Message{messageView(m)}, Done: done}, nil
}

// SubmitToolResults resumes a dialog paused on client tools with their
// results.
func (r *Runtime) SubmitToolResults(ctx context.Context, p *Principal, tenant, dialog, origin string, results []agent.ClientResult, sink agent.Sink) (Turn, error) {
	var ps problems
	if len(results) == 0 {
		ps.add("/results", "give at least one result")
	}
	for i, res := range results {
		if len(res.Content) > MaxMessageChars*4 {
			ps.add(fmt.Sprintf("/results/%d/content", i), "must be at most %d bytes", MaxMessageChars*4)
		}
	}
	if err := ps.err(); err != nil {
		return Turn{}, err
	}
	return r.resume(ctx, p, tenant, dialog, origin, sink, func(st *agent.State) error {
		var ps problems
		for i, res := range results {
			if !isPending(st, res.ID, agent.PendingClient) {
				ps.add(fmt.Sprintf("/results/%d/id", i), "is not a client tool call this dialog waits for")
			}
		}
		return ps.err()
	}, func(run *dialogRun, a *agent.Agent) (agent.Outcome, error) {
		return a.SubmitToolResults(run.ctx, &run.st, results)
	})
}

// Confirm resumes a dialog paused on a confirmation: an approved call runs,
// a declined one tells the model no.
func (r *Runtime) Confirm(ctx context.Context, p *Principal, tenant, dialog, origin, id string, approved bool, sink agent.Sink) (Turn, error) {
	return r.resume(ctx, p, tenant, dialog, origin, sink, func(st *agent.State) error {
		if !isPending(st, id, agent.PendingConfirmation) {
			return invalid(Detail{Pointer: "/id", Message: "is not a call this dialog waits to have confirmed"})
		}
		return nil
	}, func(run *dialogRun, a *agent.Agent) (agent.Outcome, error) {
		return a.Confirm(run.ctx, &run.st, id, approved)
	})
}

func isPending(st *agent.State, id, kind string) bool {
	for _, pc := range st.Pending {
		if pc.ID == id && pc.Kind == kind {
			return true
		}
	}
	return false
}

// resume runs act on a paused dialog after check accepts its state.
func (r *Runtime) resume(ctx context.Context, p *Principal, tenant, dialog, origin string, sink agent.Sink,
	check func(*agent.State) error, act func(*dialogRun, *agent.Agent) (agent.Outcome, error)) (Turn, error) {
	d, err := r.chatDialog(ctx, p, tenant, dialog, origin)
	if err != nil {
		return Turn{}, err
	}
	if d.Status != DialogPaused {
		return Turn{}, errorf(CodeConflict, "this dialog is not waiting for tool results or a confirmation")
	}
	st, err := loadState(d)
	if err != nil {
		return Turn{}, r.svc.internal(ctx, "resume: state", err)
	}
	if err := check(&st); err != nil {
		return Turn{}, err
	}
	if err := r.admit(ctx, p, d.TenantID); err != nil {
		return Turn{}, err
	}
	lr, queued, err := r.join(ctx, d, "")
	if err != nil || queued != nil {
		return Turn{}, err
	}
	run, err := r.start(ctx, p, d, lr, sink)
	if err != nil {
		return Turn{}, err
	}
	defer run.end()
	if run.dialog.Status != DialogPaused {
		return Turn{}, errorf(CodeConflict, "this dialog is no longer waiting; another request answered it")
	}
	if err := check(&run.st); err != nil {
		return Turn{}, err
	}
	return run.exec(func(a *agent.Agent) (agent.Outcome, error) { return act(run, a) })
}

// errNoProvider stops runs on a server configured without a model.
var errNoProvider = errors.New("platform: no language model is configured (RuntimeOptions.Provider is nil)")

// errBusy is the answer when another process is answering the dialog.
func errBusy() *Error {
	return errorf(CodeConflict, "a reply to this dialog is being generated elsewhere; retry when it is done")
}

// join makes the caller the dialog's runner in this process and takes the
// dialog's lease. When a run of this process already answers the dialog,
// a text is stored as queued and handed to it (the returned message);
// resuming calls (text "") get a conflict instead.
func (r *Runtime) join(ctx context.Context, d *store.Dialog, text string) (*liveRun, *store.Message, error) {
	r.mu.Lock()
	if lr := r.live[d.ID]; lr != nil {
		defer r.mu.Unlock()
		if text == "" {
			return nil, nil, errorf(CodeConflict, "a reply to this dialog is being generated; retry when it is done")
		}
		m, err := r.storeQueued(ctx, d, text)
		if err != nil {
			return nil, nil, err
		}
		lr.enqueue(queuedText{text: text, id: m.ID})
		return nil, m, nil
	}
	lr := &liveRun{owner: r.opts.Owner + "/" + randomHex(6)}
	r.live[d.ID] = lr
	r.mu.Unlock()
	ok, err := r.svc.store.AcquireLease(ctx, d.TenantID, d.ID, lr.owner, r.svc.now(), r.opts.LeaseTTL)
	if err != nil || !ok {
		r.leave(d.ID)
		if err != nil {
			return nil, nil, r.svc.internal(ctx, "acquire lease", err)
		}
		return nil, nil, errBusy()
	}
	// Whoever streamed before us is gone: their half-written replies stay
	// visible as interrupted rather than looking alive forever.
	if _, err := r.svc.store.MarkInterrupted(ctx, d.TenantID, d.ID); err != nil {
		r.leave(d.ID)
		_ = r.svc.store.ReleaseLease(context.WithoutCancel(ctx), d.TenantID, d.ID, lr.owner)
		return nil, nil, r.svc.internal(ctx, "mark interrupted", err)
	}
	return lr, nil, nil
}

func (r *Runtime) leave(dialogID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.live, dialogID)
}

func (r *Runtime) storeQueued(ctx context.Context, d *store.Dialog, text string) (*store.Message, error) {
	m, err := storeMessage(d, agent.Message{Kind: agent.KindUser, Message: llm.UserText(text), Time: r.svc.now()})
	if err != nil {
		return nil, r.svc.internal(ctx, "store user message", err)
	}
	m.Status = store.MessageQueued
	if err := r.svc.store.AppendMessage(ctx, m); err != nil {
		return nil, r.svc.internal(ctx, "store user message", err)
	}
	return m, nil
}

// liveRun is this process's run of one dialog: texts sent meanwhile wait
// in queue until the loop takes them.
type liveRun struct {
	owner string
	agent *agent.Agent // nil until the run has built its agent
	queue []queuedText
}

type queuedText struct{ text, id string }

// enqueue hands text to the running agent, or keeps it for the agent the
// run is building. Call with Runtime.mu held.
func (lr *liveRun) enqueue(q queuedText) {
	lr.queue = append(lr.queue, q)
	if lr.agent != nil {
		lr.agent.Steer(q.text)
	}
}

// take removes the queued message with this text when it is the next one,
// so the loop's user message becomes that stored row. Call with
// Runtime.mu held.
func (lr *liveRun) take(text string) (string, bool) {
	if len(lr.queue) == 0 || lr.queue[0].text != text {
		return "", false
	}
	id := lr.queue[0].id
	lr.queue = lr.queue[1:]
	return id, true
}

// botCache keeps compiled bots by version id: compiling is pure, and a
// version never changes, so entries never go stale.
type botCache struct {
	mu   sync.Mutex
	max  int
	bots map[string]*botconfig.Bot
}

func newBotCache(max int) *botCache { return &botCache{max: max, bots: map[string]*botconfig.Bot{}} }

func (c *botCache) get(id string) (*botconfig.Bot, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.bots[id]
	return b, ok
}

func (c *botCache) put(id string, b *botconfig.Bot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.bots) >= c.max {
		for k := range c.bots { // evict one arbitrary entry; a miss only costs a compile
			delete(c.bots, k)
			break
		}
	}
	c.bots[id] = b
}

// compiled returns the compiled bot of a version, from the cache when it
// can.
func (r *Runtime) compiled(ctx context.Context, v *store.BotVersion) (*botconfig.Bot, error) {
	if b, ok := r.bots.get(v.ID); ok {
		return b, nil
	}
	b, err := r.svc.opts.Compile([]byte(v.Config))
	if err != nil {
		return nil, r.svc.internal(ctx, "compile stored version "+v.ID, err)
	}
	r.bots.put(v.ID, b)
	return b, nil
}

// DialogEvent opens every stream with the dialog's id.
type DialogEvent struct {
	DialogID string `json:"dialog_id"`
}

// MessageEvent carries a message as soon as it is stored.
type MessageEvent struct {
	Message Message `json:"message"`
}

// Type is the event's "type" field.
func (DialogEvent) Type() string { return "dialog" }

// Type is the event's "type" field.
func (MessageEvent) Type() string { return "message" }

// MarshalJSON writes the event with its type, like the loop's events.
func (e DialogEvent) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type     string `json:"type"`
		DialogID string `json:"dialog_id"`
	}{e.Type(), e.DialogID})
}

// MarshalJSON writes the event with its type, like the loop's events.
func (e MessageEvent) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type    string  `json:"type"`
		Message Message `json:"message"`
	}{e.Type(), e.Message})
}

// dialogRun is one request's run of a dialog's loop: it holds the lease,
// builds the agent, persists what the loop produces and saves the state.
type dialogRun struct {
	r       *Runtime
	p       *Principal
	dialog  *store.Dialog
	version *store.BotVersion
	bot     *botconfig.Bot
	lr      *liveRun
	sink    agent.Sink
	cfg     agent.Config
	st      agent.State

	ctx    context.Context
	cancel context.CancelFunc
	unhook func() bool   // detaches cancel from Runtime.base
	stop   chan struct{} // ends the lease renewal

	turn Turn
	// streaming is the assistant row being streamed, stored at its first
	// text so a crash leaves it behind as interrupted.
	streaming *store.Message
	partial   []byte
}

// start prepares a run once the caller holds the dialog's lease: it
// reloads the dialog (another process may have changed it before the lease
// was ours), its version and state, and the agent's configuration.
func (r *Runtime) start(ctx context.Context, p *Principal, d *store.Dialog, lr *liveRun, sink agent.Sink) (*dialogRun, error) {
	run := &dialogRun{r: r, p: p, lr: lr, sink: sink, stop: make(chan struct{}),
		turn: Turn{DialogID: d.ID, Messages: []Message{}}}
	run.ctx, run.cancel = context.WithCancel(context.WithoutCancel(ctx))
	run.unhook = context.AfterFunc(r.base, run.cancel)
	r.runs.Add(1)
	run.dialog = d // released by end even when loading fails
	if err := run.load(ctx, d.TenantID, d.ID); err != nil {
		run.end()
		return nil, err
	}
	go run.renew()
	run.emit(DialogEvent{DialogID: d.ID})
	return run, nil
}

func (run *dialogRun) load(ctx context.Context, tenantID, dialogID string) error {
	r := run.r
	d, err := r.svc.store.GetDialog(ctx, tenantID, dialogID)
	if err != nil {
		return r.svc.storeErr(ctx, "run: dialog", "dialog", "", err)
	}
	run.dialog = d
	if run.version, err = r.svc.store.GetVersion(ctx, d.TenantID, d.BotID, d.VersionNumber); err != nil {
		return r.svc.storeErr(ctx, "run: version", "version", "", err)
	}
	if run.bot, err = r.compiled(ctx, run.version); err != nil {
		return err
	}
	if run.st, err = r.state(ctx, d); err != nil {
		return r.svc.internal(ctx, "run: state", err)
	}
	vars, err := r.vars(ctx, d, run.bot)
	if err != nil {
		return err
	}
	box, err := toolbox.Build(ctx, run.bot, toolbox.Options{TenantID: d.TenantID, Vars: vars,
		HTTPClient: r.opts.HTTPClient, HTTP: r.opts.HTTP, MCP: r.opts.MCP, Natives: r.opts.Natives,
		Native: builtin.Env{Now: r.svc.opts.Clock}, Schemas: r.schemas})
	if err != nil {
		return r.svc.internal(ctx, "run: tools", err)
	}
	for _, w := range box.Warnings {
		r.svc.log.WarnContext(ctx, "platform: dialog runs without some tools", "dialog", d.ID, "warning", w)
	}
	run.cfg = r.agentConfig(run.bot, vars, box.Set, agent.Hooks{
		OnMessage: run.onMessage, OnTurnEnd: run.onTurnEnd, OnError: run.onError,
	}, agent.SinkFunc(run.onEvent))
	return nil
}

// vars are the dialog's template variables: system variables, the
// context (with the bot's defaults) and the tenant's secrets.
func (r *Runtime) vars(ctx context.Context, d *store.Dialog, bot *botconfig.Bot) (botconfig.Vars, error) {
	vars := botconfig.Vars{
		"dialog_id": d.ID, "tenant_id": d.TenantID, "bot_id": d.BotID, "chatbot_id": bot.ChatbotID,
		"user_id": d.UserID, "channel": d.Channel, "locale": "en", "now": r.svc.now().Format(time.RFC3339),
	}
	for _, cv := range bot.ContextVariables {
		if cv.Default != "" {
			vars[cv.Name] = cv.Default
		}
	}
	given := map[string]string{}
	if err := json.Unmarshal([]byte(d.Context), &given); err != nil {
		return nil, r.svc.internal(ctx, "run: context", err)
	}
	for k, v := range given {
		vars[k] = v
	}
	secrets, err := r.svc.SecretVars(ctx, d.TenantID)
	if err != nil {
		return nil, err
	}
	for k, v := range secrets {
		vars[k] = v
	}
	return vars, nil
}

func (r *Runtime) agentConfig(bot *botconfig.Bot, vars botconfig.Vars, tools *tool.Set, hooks agent.Hooks, sink agent.Sink) agent.Config {
	return agent.Config{
		Resolver:           r.resolver(bot),
		Tools:              tools,
		System:             bot.Prompt(vars),
		Temperature:        bot.LLM.Temperature,
		MaxTokens:          bot.LLM.MaxTokens,
		ParallelToolCalls:  bot.Runtime.ParallelToolCalls,
		RequireDoneTool:    bot.Runtime.RequireDoneTool,
		TerminationSummary: true,
		Limits: agent.Limits{MaxTurns: bot.Runtime.MaxTurns, TokenBudget: bot.Runtime.TokenBudget,
			Timeout: bot.Runtime.Timeout},
		Hooks: hooks,
		Sink:  sink,
		Now:   r.svc.opts.Clock,
	}
}

// resolver uses the bot's model (or the server's default), then its
// fallback models after retryable failures, each with its catalog window.
func (r *Runtime) resolver(bot *botconfig.Bot) agent.ProviderResolver {
	if r.opts.Provider == nil {
		// The user's text is stored all the same; the reply is an error
		// event saying no model is available.
		return agent.ResolverFunc(func(context.Context, agent.ResolveInfo) (agent.Choice, error) {
			return agent.Choice{}, errNoProvider
		})
	}
	model := bot.LLM.Model
	if model == "" {
		model = r.opts.DefaultModel
	}
	window := func(m string) int { return r.opts.Catalog.Info(m).ContextWindow }
	return agent.Fallback(r.opts.Provider, window, append([]string{model}, bot.LLM.FallbackModels...)...)
}

// renew keeps the lease while the run lasts; losing it (this process
// stalled past the TTL and another took over) cancels the run, so two
// loops never write to one dialog.
func (run *dialogRun) renew() {
	r, d := run.r, run.dialog
	t := time.NewTicker(r.opts.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-run.stop:
			return
		case <-t.C:
			if err := r.svc.store.RenewLease(run.ctx, d.TenantID, d.ID, run.lr.owner, r.svc.now(), r.opts.LeaseTTL); err != nil {
				r.svc.log.Error("platform: dialog lease lost; stopping its run", "dialog", d.ID, "err", err)
				run.cancel()
				return
			}
		}
	}
}

// queue stores the request's text as queued and registers it, so the
// loop's user message becomes that row.
func (run *dialogRun) queue(ctx context.Context, text string) error {
	m, err := run.r.storeQueued(ctx, run.dialog, text)
	if err != nil {
		return err
	}
	run.r.mu.Lock()
	run.lr.queue = append(run.lr.queue, queuedText{text: text, id: m.ID})
	run.r.mu.Unlock()
	return nil
}

// exec runs act, then the texts that arrived too late for it, and saves
// the state after each.
func (run *dialogRun) exec(act func(*agent.Agent) (agent.Outcome, error)) (Turn, error) {
	r := run.r
	for {
		a, err := agent.New(run.cfg)
		if err != nil {
			return run.turn, r.svc.internal(run.ctx, "run: agent", err)
		}
		r.mu.Lock()
		run.lr.agent = a
		for _, q := range run.lr.queue[min(len(run.lr.queue), 1):] {
			a.Steer(q.text) // the first is the text act sends itself
		}
		r.mu.Unlock()
		out, runErr := act(a)
		run.closeStreaming(store.MessageInterrupted)
		if err := run.save(out); err != nil {
			return run.turn, err
		}
		if runErr != nil {
			r.svc.log.Warn("platform: dialog run stopped with an error", "dialog", run.dialog.ID, "err", runErr)
		}
		next, ok := run.leftover(out)
		if !ok {
			return run.turn, nil
		}
		act = func(a *agent.Agent) (agent.Outcome, error) { return a.Send(run.ctx, &run.st, next) }
	}
}

// leftover returns a text queued after the loop last looked, to answer
// next; a run that paused or handed off leaves it stored, unanswered.
func (run *dialogRun) leftover(out agent.Outcome) (string, bool) {
	run.r.mu.Lock()
	defer run.r.mu.Unlock()
	run.lr.agent = nil
	if len(run.lr.queue) == 0 || run.ctx.Err() != nil || out.StopReason == agent.StopHandoff {
		return "", false
	}
	return run.lr.queue[0].text, true
}

// save stores the loop state (without messages, which are rows) and the
// dialog status the outcome implies.
func (run *dialogRun) save(out agent.Outcome) error {
	status := DialogActive
	switch out.StopReason {
	case agent.StopPaused:
		status = DialogPaused
	case agent.StopHandoff:
		status = DialogHandoff
	}
	st := run.st
	st.Messages = nil
	b, err := json.Marshal(st)
	if err != nil {
		return run.r.svc.internal(run.ctx, "save state", err)
	}
	ctx := context.WithoutCancel(run.ctx)
	if err := run.r.svc.store.SaveDialogState(ctx, run.dialog.TenantID, run.dialog.ID, status, string(b)); err != nil {
		return run.r.svc.internal(ctx, "save state", err)
	}
	run.dialog.Status = status
	run.turn.Pending = nil
	for _, pc := range out.Pending {
		run.turn.Pending = append(run.turn.Pending, PendingCall{ID: pc.ID, Name: pc.Name, Arguments: pc.Arguments, Kind: pc.Kind})
	}
	return nil
}

// end releases the lease and the dialog's live entry.
func (run *dialogRun) end() {
	close(run.stop)
	run.cancel()
	run.unhook()
	r := run.r
	defer r.runs.Done()
	r.mu.Lock()
	for id, lr := range r.live {
		if lr == run.lr {
			delete(r.live, id)
		}
	}
	r.mu.Unlock()
	if run.dialog != nil {
		ctx := context.WithoutCancel(run.ctx)
		if err := r.svc.store.ReleaseLease(ctx, run.dialog.TenantID, run.dialog.ID, run.lr.owner); err != nil {
			r.svc.log.Error("platform: release dialog lease", "dialog", run.dialog.ID, "err", err)
		}
	}
}

// emit sends an event to the caller's sink.
func (run *dialogRun) emit(e agent.Event) {
	if run.sink != nil {
		run.sink.Send(e)
	}
}

// onEvent is the loop's sink: it stores a streaming reply at its first
// text, keeps the final events for the JSON answer, and forwards all.
func (run *dialogRun) onEvent(e agent.Event) {
	switch ev := e.(type) {
	case agent.TextDelta:
		run.startStreaming()
		run.partial = append(run.partial, ev.Text...)
	case agent.Done:
		run.turn.Done = &ev
		run.r.metrics.runs.WithLabelValues(string(ev.StopReason)).Inc()
	case agent.Error:
		run.turn.Error = &ev
	}
	run.emit(e)
}

func (run *dialogRun) startStreaming() {
	if run.streaming != nil {
		return
	}
	m := &store.Message{TenantID: run.dialog.TenantID, DialogID: run.dialog.ID, Kind: string(agent.KindAssistant),
		Role: string(llm.RoleAssistant), BotVersion: run.dialog.VersionNumber, Status: store.MessageStreaming,
		CreatedAt: run.r.svc.now()}
	if err := run.r.svc.store.AppendMessage(context.WithoutCancel(run.ctx), m); err != nil {
		// The reply still streams and is stored whole at its end; only a
		// crash in between would now leave no trace of it.
		run.r.svc.log.Error("platform: store streaming reply", "dialog", run.dialog.ID, "err", err)
		return
	}
	run.streaming = m
}

// closeStreaming ends a streaming row the loop never completed (an error
// or a cancel midway), keeping the text that did arrive.
func (run *dialogRun) closeStreaming(status string) {
	m := run.streaming
	if m == nil {
		return
	}
	text := string(run.partial)
	run.streaming, run.partial = nil, run.partial[:0]
	content, _ := json.Marshal(llm.AssistantText(text).Content)
	err := run.r.svc.store.UpdateMessage(context.WithoutCancel(run.ctx), m.TenantID, m.ID, store.MessageUpdate{
		Content: string(content), Text: text, Meta: "{}", Status: status})
	if err != nil {
		run.r.svc.log.Error("platform: close streaming reply", "dialog", run.dialog.ID, "err", err)
	}
}

// onMessage persists each message the loop appends, as it appends it.
func (run *dialogRun) onMessage(ctx context.Context, m agent.Message) error {
	row, err := run.persist(ctx, m)
	if err != nil {
		return err
	}
	if err := run.persistToolCalls(ctx, row, m); err != nil {
		return err
	}
	if m.Kind == agent.KindToolResult {
		run.r.metrics.toolCall(m)
	}
	view := messageView(row)
	run.turn.Messages = append(run.turn.Messages, view)
	run.emit(MessageEvent{Message: view})
	return nil
}

func (run *dialogRun) persist(ctx context.Context, m agent.Message) (*store.Message, error) {
	st := run.r.svc.store
	if m.Kind == agent.KindUser && m.Origin == "" {
		run.r.mu.Lock()
		id, ok := run.lr.take(m.Text())
		run.r.mu.Unlock()
		if ok {
			return st.DequeueMessage(ctx, run.dialog.TenantID, run.dialog.ID, id)
		}
	}
	row, err := storeMessage(run.dialog, m)
	if err != nil {
		return nil, err
	}
	if m.Kind == agent.KindAssistant && run.streaming != nil {
		row.ID, row.Seq = run.streaming.ID, run.streaming.Seq
		run.streaming, run.partial = nil, run.partial[:0]
		err := st.UpdateMessage(ctx, row.TenantID, row.ID, store.MessageUpdate{Content: row.Content, Text: row.Text,
			Model: row.Model, Provider: row.Provider, Meta: row.Meta, Status: store.MessageComplete, Turn: row.Turn,
			InputTokens: row.InputTokens, OutputTokens: row.OutputTokens})
		return row, err
	}
	return row, st.AppendMessage(ctx, row)
}

// persistToolCalls records the calls of an assistant message and the
// results of tool_result messages.
func (run *dialogRun) persistToolCalls(ctx context.Context, row *store.Message, m agent.Message) error {
	st := run.r.svc.store
	for _, use := range m.ToolUses() {
		args := string(use.Arguments)
		if !json.Valid(use.Arguments) {
			args, _ = marshalString(map[string]string{"_raw": string(use.Arguments)})
		}
		c := &store.ToolCall{TenantID: row.TenantID, DialogID: row.DialogID, CallID: use.ID, MessageID: row.ID,
			Name: use.Name, Arguments: args, Status: store.ToolCallPending}
		if err := st.PutToolCall(ctx, c); err != nil {
			return err
		}
	}
	if res := m.ToolResult(); res != nil && m.Kind == agent.KindToolResult {
		c := &store.ToolCall{TenantID: row.TenantID, DialogID: row.DialogID, CallID: res.ToolUseID,
			Result: res.Content, IsError: res.IsError, Status: store.ToolCallDone}
		if m.Tool != nil {
			c.DurationMS = m.Tool.DurationMS
			if m.Tool.Skipped {
				c.Status = store.ToolCallSkipped
			}
		}
		if err := st.PutToolCall(ctx, c); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return nil
}

func marshalString(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func (run *dialogRun) onError(ctx context.Context, err error) {
	run.r.svc.log.WarnContext(ctx, "platform: dialog run error", "dialog", run.dialog.ID, "err", err)
}

// idempotencyStale is how long an unfinished Idempotency-Key claim blocks
// retries: longer than any run, so only a crashed server's claim expires.
const idempotencyStale = 15 * time.Minute

// Replay is the stored first response to an Idempotency-Key.
type Replay struct {
	Status      int
	ContentType string
	Body        string
}

// ClaimIdempotencyKey starts answering a request that carries an
// Idempotency-Key. It returns nil when the caller must answer it (then
// CompleteIdempotencyKey or ForgetIdempotencyKey), the stored response to
// replay for a retry, a conflict while the first request is still being
// answered, and invalid when the key was used for another request.
// fingerprint identifies the request; the caller's identity is mixed in
// so one key can never replay another's response.
func (r *Runtime) ClaimIdempotencyKey(ctx context.Context, p *Principal, tenant, key, fingerprint string) (*Replay, error) {
	t, err := r.svc.tenantFor(ctx, p, tenant, auth.ObjDialogs, auth.ActChat)
	if err != nil {
		return nil, err
	}
	if len(key) == 0 || len(key) > 255 {
		return nil, invalid(Detail{Pointer: "/headers/Idempotency-Key", Message: "must be 1-255 characters"})
	}
	fp := hashHex(p.actor() + "\x00" + fingerprint)
	rec, err := r.svc.store.ClaimIdempotencyKey(ctx, t.ID, key, fp, r.svc.now(), idempotencyStale)
	switch {
	case err != nil:
		return nil, r.svc.internal(ctx, "claim idempotency key", err)
	case rec == nil:
		return nil, nil
	case rec.Fingerprint != fp:
		return nil, invalid(Detail{Pointer: "/headers/Idempotency-Key", Message: "was already used for a different request"})
	case !rec.Done():
		return nil, errorf(CodeConflict, "a request with this Idempotency-Key is still being answered")
	}
	return &Replay{Status: rec.Status, ContentType: rec.ContentType, Body: rec.Body}, nil
}

// CompleteIdempotencyKey stores the response to replay for the key.
func (r *Runtime) CompleteIdempotencyKey(ctx context.Context, p *Principal, tenant, key string, resp Replay) error {
	t, err := r.svc.tenantFor(ctx, p, tenant, auth.ObjDialogs, auth.ActChat)
	if err != nil {
		return err
	}
	if err := r.svc.store.CompleteIdempotencyKey(ctx, t.ID, key, resp.Status, resp.ContentType, resp.Body); err != nil {
		return r.svc.internal(ctx, "complete idempotency key", err)
	}
	return nil
}

// ForgetIdempotencyKey drops an unfinished claim, for requests refused
// before they changed anything, so a retry is answered afresh.
func (r *Runtime) ForgetIdempotencyKey(ctx context.Context, p *Principal, tenant, key string) error {
	t, err := r.svc.tenantFor(ctx, p, tenant, auth.ObjDialogs, auth.ActChat)
	if err != nil {
		return err
	}
	if err := r.svc.store.ForgetIdempotencyKey(ctx, t.ID, key); err != nil {
		return r.svc.internal(ctx, "forget idempotency key", err)
	}
	return nil
}

func hashHex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
