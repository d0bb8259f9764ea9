package dialog

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/identity"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/pii"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/redislimit"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/tool"
	"github.com/parleyhq/parley/pkg/tool/builtin"
	"github.com/parleyhq/parley/pkg/tool/httptool"
	"github.com/parleyhq/parley/pkg/tool/mcptool"
	"github.com/parleyhq/parley/pkg/webhook"
)

// Options are what the runtime needs. The first block is required: New
// fails without any of it, so a missing piece shows at start-up, not in a
// turn. cmd/parley wires them.
type Options struct {
	// Service authorises callers and owns tenants, bots, versions and
	// secrets.
	Service *platform.Service
	// Store is the database the Service works on.
	Store *store.Store
	// Catalog gives context windows and prices (llm.LoadCatalog of
	// configs.Models()).
	Catalog *llm.Catalog
	// HTTPClient is the SSRF-safe client (outbound.NewClient) that HTTP
	// tools and MCP servers over HTTP are reached through.
	HTTPClient *http.Client
	// Natives resolves native tool names (builtin.NewRegistry()).
	Natives *builtin.Registry
	// Clock returns the current time, for leases, messages and the
	// {{now}} variable (time.Now).
	Clock func() time.Time
	// Logger receives internal errors with their causes and the warnings
	// of runs.
	Logger *slog.Logger

	// Provider answers every model call (the server's configured
	// OpenAI-compatible API). Without one, messages are stored and their
	// runs end with an error event saying no model is available.
	Provider llm.Provider
	// Providers are the other providers a bot's llm.provider and
	// llm.fallbacks may name (the default one may be among them).
	Providers Providers
	// NewProvider builds a tenant's own provider (PUT /providers) for a
	// run, sending through HTTPClient, so tenant base URLs pass the
	// outbound policy. Nil leaves tenant providers unused.
	NewProvider func(p platform.TenantProvider, client *http.Client) (llm.Provider, error)
	// DefaultModel is used when a bot's config names none.
	DefaultModel string
	// MaxImageBytes is the largest image a user message may carry; 0
	// means DefaultMaxImageBytes.
	MaxImageBytes int64
	// HTTP tunes HTTP tools.
	HTTP httptool.Options
	// MCP is the process's MCP connection pool; nil leaves MCP tools out.
	MCP *mcptool.Pool
	// Limits are the rate limits and the daily token quota; the zero
	// value limits nothing.
	Limits Limits
	// Shared counts the rate limits, the tenants' streams and their daily
	// tokens in Redis, for every server sharing it (redislimit.Open, run
	// by the caller); nil counts them in this process. While Redis does
	// not answer, this process counts them on its own, unless
	// SharedFailClosed: then messages are refused with unavailable.
	Shared           *redislimit.Limiter
	SharedFailClosed bool
	// LeaseTTL is how long a dialog's lease lasts without renewal (it is
	// renewed every third of it while the loop runs); default 1 minute. A
	// crashed server's dialogs are free again after it.
	LeaseTTL time.Duration
	// LiveRecheck is how often a live stream (Follow, FollowInbox) reads
	// the store without being signalled, covering a notification lost
	// while a listener reconnected; default 30 seconds.
	LiveRecheck time.Duration
	// HistoryCacheBytes bounds the memory kept for the histories of the
	// dialogs answered last, so their next turn reads none of it from the
	// database; default 32 MiB, negative keeps none.
	HistoryCacheBytes int
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
	svc     *platform.Service
	store   *store.Store
	log     *slog.Logger
	opts    Options
	metrics *runtimeMetrics
	limits  *limiter
	schemas *tool.SchemaCache
	bots    *botCache
	tenants *tenantCache
	// dialogBots says which bot version answers a dialog (guardrails.go).
	dialogBots *dialogBotCache
	plans      *planCache
	history    *historyCache
	meter      *meter
	ids        *identity.Verifier

	// base ends every run on Shutdown; runs do not end when their request
	// does, so a reply whose client went away is still stored.
	base     context.Context
	shutdown context.CancelFunc
	runs     sync.WaitGroup

	mu   sync.Mutex
	live map[string]*liveRun // liveKey -> the run of this process

	// signals wakes the dialogs' live streams (Follow).
	signals *signals
	// typing thins out the typing signals clients send (presence.go).
	typing *typingGate
}

// New returns the dialog runtime. It fails, naming the field, when a
// required Option is missing.
func New(opts Options) (*Runtime, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	if opts.HistoryCacheBytes == 0 {
		opts.HistoryCacheBytes = defaultHistoryCacheBytes
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = time.Minute
	}
	if opts.LiveRecheck <= 0 {
		opts.LiveRecheck = defaultLiveRecheck
	}
	if opts.Owner == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("dialog: name this process in leases (set Options.Owner): %w", err)
		}
		opts.Owner = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), randomHex(4))
	}
	metrics := newRuntimeMetrics(opts.Metrics)
	if opts.Provider != nil {
		opts.Provider = meteredProvider{Provider: opts.Provider, m: metrics, catalog: opts.Catalog}
	}
	opts.Providers = opts.Providers.metered(metrics, opts.Catalog)
	base, cancel := context.WithCancel(context.Background())
	// Records logged with a dialog's guard have its personal data masked
	// when its bot asks for that (guardrails.go).
	opts.Logger = slog.New(pii.NewLogHandler(opts.Logger.Handler()))
	r := &Runtime{svc: opts.Service, store: opts.Store, log: opts.Logger, opts: opts, metrics: metrics,
		limits: newLimiter(opts.Limits), schemas: tool.NewSchemaCache(),
		ids:  identity.NewVerifier(opts.HTTPClient, opts.Clock),
		bots: newBotCache(512), tenants: newTenantCache(4096), dialogBots: newDialogBotCache(4096), plans: newPlanCache(4096), history: newHistoryCache(opts.HistoryCacheBytes),
		meter: newMeter(opts.Store, opts.Logger), base: base, shutdown: cancel, live: map[string]*liveRun{},
		signals: newSignals(), typing: newTypingGate()}
	// Another server's CancelReply reaches this one's runs.
	opts.Store.Signals().OnReplyStop(func(tenantID, dialogID string) { r.Dialogs().stopLocal(tenantID, dialogID) })
	// Every server's signals reach this one's live streams.
	opts.Store.Signals().OnDialog(r.signals.deliver)
	go r.meter.run(base)
	return r, nil
}

// check names the first required option that is missing.
func (o Options) check() error {
	var missing string
	switch {
	case o.Service == nil:
		missing = "Service"
	case o.Store == nil:
		missing = "Store"
	case o.Catalog == nil:
		missing = "Catalog"
	case o.HTTPClient == nil:
		missing = "HTTPClient"
	case o.Natives == nil:
		missing = "Natives"
	case o.Clock == nil:
		missing = "Clock"
	case o.Logger == nil:
		missing = "Logger"
	default:
		return nil
	}
	return fmt.Errorf("dialog: the runtime needs Options.%s", missing)
}

func (r *Runtime) now() time.Time { return r.opts.Clock().UTC() }

// internal logs err with where it happened and returns an Error that says
// nothing about it, so database or driver text never reaches callers.
func (r *Runtime) internal(ctx context.Context, op string, err error) *platform.Error {
	r.log.ErrorContext(ctx, "dialog: internal error", "op", op, "err", err)
	return platform.Internal(err)
}

// storeErr maps a store error: ErrNotFound becomes not_found for what,
// an invalid cursor invalid, anything else internal.
func (r *Runtime) storeErr(ctx context.Context, op, what string, err error) error {
	if e := platform.StoreError(err, what, ""); e != nil {
		return e
	}
	return r.internal(ctx, op, err)
}

// Shutdown cancels every running loop (each stops with an error event and
// its state saved as far as it got), waits for them up to ctx, and writes
// the usage they metered.
func (r *Runtime) Shutdown(ctx context.Context) error {
	r.shutdown()
	done := make(chan struct{})
	go func() { r.runs.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return cmp.Or(r.meter.flush(ctx), ctx.Err())
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// errNoProvider stops runs on a server configured without a model.
var errNoProvider = errors.New("dialog: no language model is configured (Options.Provider is nil)")

// errBusy is the answer when another process is answering the dialog.
func errBusy() *platform.Error {
	return busy("a reply to this dialog is being generated elsewhere; retry when it is done")
}

// join makes the caller the dialog's runner in this process; its run then
// takes the dialog's lease (start). When a run of this process already
// answers the dialog, a text is stored as queued and handed to it (the
// returned message);
// resuming calls (text "") get a conflict instead. A run that is still
// taking its lease, or is ending, accepts no texts: the caller waits for
// it to settle, so a text never joins a run that will not answer it.
func (r *Runtime) join(ctx context.Context, p *platform.Principal, tenantID, dialogID, text string) (*liveRun, *store.Message, error) {
	for {
		r.mu.Lock()
		lr := r.live[liveKey(tenantID, dialogID)]
		if lr == nil {
			break // with r.mu held
		}
		if !lr.open {
			settled := lr.changed
			r.mu.Unlock()
			select {
			case <-settled:
				continue
			case <-ctx.Done():
				return nil, nil, errBusy()
			}
		}
		defer r.mu.Unlock()
		// An open run holds the lease, so its dialog is the tenant's; a
		// widget key still chats only with its bot's.
		d := lr.dialog
		if !mayChat(p, d) {
			return nil, nil, platform.NotFound("dialog")
		}
		if text == "" {
			return nil, nil, busy("a reply to this dialog is being generated; retry when it is done")
		}
		m, err := r.storeUserText(ctx, d, text, store.MessageQueued)
		if err != nil {
			return nil, nil, err
		}
		lr.enqueue(queuedText{text: text, id: m.ID})
		return nil, m, nil
	}
	lr := &liveRun{key: liveKey(tenantID, dialogID), owner: r.opts.Owner + "/" + randomHex(6), changed: make(chan struct{})}
	r.live[lr.key] = lr
	r.mu.Unlock()
	return lr, nil, nil
}

// leave removes lr, the dialog's run of this process, and wakes the
// requests waiting for it to settle.
func (r *Runtime) leave(lr *liveRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live[lr.key] == lr {
		delete(r.live, lr.key)
	}
	lr.setOpen(false)
}

// liveKey names a dialog's run by tenant too: the dialog id comes from
// the caller, and a request for another tenant's dialog must not find,
// or wait for, that tenant's run.
func liveKey(tenantID, dialogID string) string { return tenantID + "/" + dialogID }

// open lets texts join lr, once its lease is held and its own text (if
// any) is first in its queue.
func (r *Runtime) open(lr *liveRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	lr.setOpen(true)
}

// storeUserText stores a user's text with status: queued for the loop to
// take, or complete when it is already where it belongs.
func (r *Runtime) storeUserText(ctx context.Context, d *store.Dialog, text, status string, images ...llm.Image) (*store.Message, error) {
	m, err := r.userRow(ctx, d, text, images...)
	if err != nil {
		return nil, err
	}
	m.Status = status
	hooked, err := r.svc.Webhooks().Subscribes(ctx, d.TenantID, webhook.MessageCreated)
	if err != nil {
		return nil, r.internal(ctx, "store user message: webhooks", err)
	}
	err = r.writeMessage(ctx, hooked, d, m, func(st *store.Store) error { return st.Tenant(m.TenantID).Messages().Append(ctx, m) })
	if err != nil {
		return nil, r.internal(ctx, "store user message", err)
	}
	return m, nil
}

// userRow is a user's text, with their images, as a new row of dialog d,
// not yet stored.
func (r *Runtime) userRow(ctx context.Context, d *store.Dialog, text string, images ...llm.Image) (*store.Message, error) {
	m, err := storeMessage(d, agent.Message{Kind: agent.KindUser, Message: llm.UserMessage(text, images...), Time: r.now()})
	if err != nil {
		return nil, r.internal(ctx, "store user message", err)
	}
	return m, nil
}

// liveRun is this process's run of one dialog: texts sent meanwhile wait
// in queue until the loop takes them.
type liveRun struct {
	key   string
	owner string
	// dialog is the dialog as its lease found it, set before the run
	// opens.
	dialog *store.Dialog
	agent  *agent.Agent // nil until the run has built its agent
	// stop cancels the run's context with a cause (CancelReply); nil
	// until the run starts.
	stop  context.CancelCauseFunc
	queue []queuedText
	// open says texts may join: the lease is held, the run's own text is
	// first in queue, and the run has not decided to end. A text joining
	// earlier could be stranded by a lease another process holds, or
	// answered before the text that started the run; one joining later
	// would never be answered.
	open bool
	// changed is closed when open changes, waking requests waiting to join.
	changed chan struct{}
}

// setOpen sets open and wakes the waiting requests. Call with Runtime.mu
// held.
func (lr *liveRun) setOpen(open bool) {
	lr.open = open
	close(lr.changed)
	lr.changed = make(chan struct{})
}

// queuedText is a user's text waiting for the loop. row is set when the
// text was stored complete, already where the loop will put it.
type queuedText struct {
	text, id string
	row      *store.Message
}

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
func (lr *liveRun) take(text string) (queuedText, bool) {
	if len(lr.queue) == 0 || lr.queue[0].text != text {
		return queuedText{}, false
	}
	q := lr.queue[0]
	lr.queue = lr.queue[1:]
	return q, true
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

// botFor returns the compiled bot dialog d runs.
func (r *Runtime) botFor(ctx context.Context, d *store.Dialog) (*botconfig.Bot, error) {
	return r.versionBot(ctx, d.TenantID, d.BotID, d.VersionNumber)
}

// versionBot returns the compiled version number of the tenant's bot. A
// version row is never updated (an edit adds the next number; a draft is
// a version not yet published), so it is cached by tenant, bot and number
// and a warm turn or a new dialog reads no version row. A deleted bot's
// entries are never wrong either: its versions are reached only through
// the bot or a dialog, which are read first and go with it, and a new bot
// gets a new id.
func (r *Runtime) versionBot(ctx context.Context, tenantID, botID string, number int) (*botconfig.Bot, error) {
	key := tenantID + "/" + botID + "/" + strconv.Itoa(number)
	if b, ok := r.bots.get(key); ok {
		return b, nil
	}
	v, err := r.store.Tenant(tenantID).Versions().Get(ctx, botID, number)
	if err != nil {
		return nil, r.storeErr(ctx, "version", "version", err)
	}
	b, err := r.compiled(ctx, v)
	if err != nil {
		return nil, err
	}
	r.bots.put(key, b)
	return b, nil
}

// compiled returns the compiled bot of a version, from the cache when it
// can.
func (r *Runtime) compiled(ctx context.Context, v *store.BotVersion) (*botconfig.Bot, error) {
	if b, ok := r.bots.get(v.ID); ok {
		return b, nil
	}
	b, err := r.svc.Configs().CompileStored([]byte(v.Config))
	if err != nil {
		return nil, r.internal(ctx, "compile stored version "+v.ID, err)
	}
	r.bots.put(v.ID, b)
	return b, nil
}
