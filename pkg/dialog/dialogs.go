package dialog

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/knowledge/cite"
	"github.com/parleyhq/parley/pkg/pii"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/webhook"
)

// Dialogs is a tenant's dialogs: create, read, export, delete and erase: reach it with Runtime.Dialogs().
type Dialogs struct{ rt *Runtime }

// Dialogs returns a tenant's dialogs: create, read, export, delete and erase.
func (r *Runtime) Dialogs() Dialogs { return Dialogs{r} }

// Bounds of what a caller may put into a dialog.
const (
	MaxUserIDLength     = 200
	MaxContextValueSize = 4 << 10
	// MaxMessageChars caps one user message: far beyond what a person types,
	// well below what would flood a model's context window.
	MaxMessageChars = 32 << 10
)

// Dialog statuses as callers see them.
const (
	DialogActive  = store.DialogActive
	DialogPaused  = store.DialogPaused
	DialogHandoff = store.DialogHandoff
	DialogClosed  = store.DialogClosed
)

// CreateDialogInput is what a caller says about a new dialog.
type CreateDialogInput struct {
	// UserID names the end user in the caller's own terms (optional;
	// server-side callers only: a widget's visitor is anonymous or named by
	// a signed user token).
	UserID string
	// UserToken is the end user's signed token (a JWT the tenant's backend
	// issued): its sub names the user, its claims fill identity variables.
	UserToken string
	// Context fills the bot's declared context variables.
	Context map[string]string
	// Version picks a version other than the published one (a draft
	// preview); only callers who may edit versions may ask for it.
	Version int
	// Origin is the browser origin of the request, "" server to server.
	Origin string
	// Channel names where the dialog comes from (the {{channel}}
	// variable) when the caller's face says it better than its key: the
	// API's OpenAI face uses "openai", its MCP face "mcp". Empty: from the
	// key ("api", "widget", "admin").
	Channel string
	// History seeds the dialog with an earlier conversation, in order:
	// user, assistant and tool_result messages (the OpenAI face's request
	// messages). A history ending with an assistant message that calls
	// tools leaves the dialog paused on those calls as client calls, for
	// SubmitToolResults to answer.
	History []agent.Message
}

// Dialog is a dialog as callers see it.
type Dialog struct {
	ID      string
	BotID   string
	Version int
	Preview bool
	UserID  string
	Channel string
	Context map[string]string
	Status  string
	// ClosedReason says why a closed dialog was closed.
	ClosedReason string
	// ParentDialogID and ParentCallID name the dialog and tool call whose
	// agent call this dialog is the sub-run of; "" for other dialogs.
	ParentDialogID string
	ParentCallID   string
	Greeting       string
	// Pending are the calls a paused dialog waits for.
	Pending []PendingCall
	// Outcome is how the dialog ended ("" while open), OutcomeReason why,
	// OutcomeAt when it was computed (docs/insights.md).
	Outcome       string
	OutcomeReason string
	OutcomeAt     *time.Time
	// Rating is the end user's rating of the dialog, 1 to 5; 0 for none.
	Rating int
	// Labels are the tenant's own tags on the dialog.
	Labels    []string
	CreatedAt time.Time
	UpdatedAt time.Time
	// Summary is what a list shows of the dialog; ListDialogs fills it.
	Summary *DialogSummary
}

// DialogSummary is a dialog's snippet (the first message matching the
// search, else the first user message) and counts.
type DialogSummary struct {
	Snippet      string
	Messages     int64
	ToolErrors   int64
	FeedbackUp   int64
	FeedbackDown int64
}

// PendingCall is a call a paused dialog waits for: a client tool to run or a
// call to confirm.
type PendingCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage
	Kind      string
}

// Message is a stored message as callers see it.
type Message struct {
	ID       string
	Seq      int64
	Kind     string
	Role     string
	Content  json.RawMessage
	Text     string
	Model    string
	Provider string
	// Version is the bot version that produced an assistant message.
	Version int
	Status  string
	Usage   *Usage
	// Author names the person who wrote an operator message.
	Author string
	// Citations are the knowledge passages an assistant message cites, in
	// the order their [n] markers first appear.
	Citations []cite.Citation
	CreatedAt time.Time
}

// Usage is a token count.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// ToolCall is a tool call of a dialog with its result.
type ToolCall struct {
	ID         string
	MessageID  string
	Name       string
	Arguments  json.RawMessage
	Result     string
	IsError    bool
	Status     string
	DurationMS int64
}

// DialogDetail is a dialog with its whole history.
type DialogDetail struct {
	Dialog
	Messages  []Message
	ToolCalls []ToolCall
	// Feedback is the end user's ratings of replies, in their wire form;
	// never nil (built with make), so the API answers [] for none.
	Feedback []apiclient.Feedback
}

// DialogFilter narrows ListDialogs.
type DialogFilter struct {
	// Bot is a bot id or slug; Status one of the dialog statuses.
	Bot, Status string
	// Parent keeps the sub-run dialogs of one dialog (agents called as
	// tools).
	Parent string
	// From and To bound when dialogs were created: a UTC date like
	// 2030-01-31 (To includes that whole day) or an RFC 3339 time (To
	// excluded).
	From, To string
	// UserID keeps one end user's dialogs; Feedback those rated up, down,
	// any or none; Query those with a message holding every word of it.
	UserID, Feedback, Query string
	// Order is "oldest" (the default: oldest first) or "newest".
	Order string
	// Outcome keeps dialogs of one outcome; Label those with a label.
	Outcome, Label string
}

// MaxSearchChars caps a search query.
const MaxSearchChars = 200

// Create starts a dialog with the tenant's bot on its published
// version, or on version in.Version for callers who may edit versions (a
// preview of a draft). The context must name only the bot's declared
// context variables and give every required one.
func (di Dialogs) Create(ctx context.Context, p *platform.Principal, tenant, bot string, in CreateDialogInput) (Dialog, error) {
	r := di.rt
	// Two statements when warm: the bot, read fresh because publishing
	// changes it, and the insert of the dialog. The tenant comes from
	// chatTenant's cache and the version from versionBot's, both of rows
	// that never change.
	tenantID, err := r.chatTenant(ctx, p, tenant)
	if err != nil {
		return Dialog{}, err
	}
	b, err := r.svc.Auth().AuthorizeChatIn(ctx, p, tenantID, bot, in.Origin)
	if err != nil {
		return Dialog{}, err
	}
	number, variant, err := r.Dialogs().pickVersion(p, b, in.Version)
	if err != nil {
		return Dialog{}, err
	}
	preview := variant == variantPreview
	compiled, err := r.versionBot(ctx, b.TenantID, b.ID, number)
	if err != nil {
		return Dialog{}, err
	}
	if err := r.endUser(ctx, p, b.TenantID, compiled.ContextVariables, &in); err != nil {
		return Dialog{}, err
	}
	var ps problems
	if utf8.RuneCountInString(in.UserID) > MaxUserIDLength {
		ps.add("/user_id", "must have at most %d characters", MaxUserIDLength)
	}
	checkContext(&ps, compiled.ContextVariables, in.Context)
	if err := ps.err(); err != nil {
		return Dialog{}, err
	}
	ctxJSON, err := json.Marshal(nonNilMap(in.Context))
	if err != nil {
		return Dialog{}, r.internal(ctx, "create dialog: context", err)
	}
	d := store.Dialog{TenantID: b.TenantID, BotID: b.ID, VersionNumber: number, Preview: preview,
		UserID: in.UserID, Channel: cmp.Or(in.Channel, channelOf(p)), Context: string(ctxJSON), State: "{}"}
	vault := pii.NewVault()
	history, err := seed(&d, maskHistory(compiled.Guardrails, vault, in.History))
	if err != nil {
		return Dialog{}, r.internal(ctx, "create dialog: history", err)
	}
	// dialog.created, once for the dialog. The rows of a seeded history
	// replay the caller's own earlier conversation and are not new
	// messages (no message.created for them).
	// The id is made here so the event can name its dialog.
	d.ID = store.NewID(store.PrefixDialog)
	var out Dialog
	ev := platform.Event{TenantID: b.TenantID, BotID: b.ID, DialogID: d.ID, Type: webhook.DialogCreated}
	err = r.svc.Webhooks().WithEvent(ctx, ev, func(st *store.Store) (any, error) {
		if err := st.Tenant(d.TenantID).Dialogs().Create(ctx, &d, history...); err != nil {
			return nil, err
		}
		out, err = dialogView(&d)
		return dialogCreatedData{Dialog: WireDialog(out), Bot: b.Slug}, err
	})
	if err != nil {
		return Dialog{}, r.internal(ctx, "create dialog", err)
	}
	// Its first turn here need not read back the row just inserted to
	// find the dialog's bot version, which never changes.
	r.dialogBots.put(&store.Dialog{TenantID: d.TenantID, ID: d.ID, BotID: d.BotID, VersionNumber: d.VersionNumber})
	if vault.Len() > 0 {
		// After the commit: the vault belongs to a dialog that exists.
		data, err := json.Marshal(vault)
		if err == nil {
			_, err = r.svc.PIIVaults().Save(ctx, d.TenantID, d.ID, 0, data)
		}
		if err != nil {
			return Dialog{}, r.internal(ctx, "create dialog: vault", err)
		}
	}
	r.metrics.dialogs.WithLabelValues(variant).Inc()
	out.Greeting = compiled.Greeting
	return out, err
}

// seed turns a history into the rows of new dialog d and, when it ends
// on tool calls, pauses d on them as client calls.
func seed(d *store.Dialog, history []agent.Message) ([]*store.Message, error) {
	rows := make([]*store.Message, len(history))
	for i, m := range history {
		row, err := storeMessage(d, m)
		if err != nil {
			return nil, err
		}
		row.BotVersion = 0 // the caller wrote it, not a version of the bot
		rows[i] = row
	}
	if n := len(history); n > 0 && history[n-1].Kind == agent.KindAssistant {
		var st savedState
		for _, u := range history[n-1].ToolUses() {
			st.Pending = append(st.Pending, agent.PendingCall{ID: u.ID, Name: u.Name, Arguments: u.Arguments, Kind: agent.PendingClient})
		}
		if len(st.Pending) > 0 {
			b, err := json.Marshal(st)
			if err != nil {
				return nil, err
			}
			d.Status, d.State = DialogPaused, string(b)
		}
	}
	return rows, nil
}

// Variants of a new dialog's version, for the dialogs metric.
const (
	variantLive    = "live"
	variantCanary  = "canary"
	variantPreview = "preview"
)

// pickVersion decides which version a new dialog runs: the one asked for
// (a preview unless it is live), else the canary for its share of dialogs,
// else the published one.
func (d Dialogs) pickVersion(p *platform.Principal, b platform.Bot, asked int) (int, string, error) {
	r := d.rt
	if asked != 0 {
		if err := r.svc.Auth().Authorize(p, b.TenantID, auth.ObjVersions, auth.ActWrite); err != nil {
			return 0, "", platform.Errorf(platform.CodeForbidden, "only editors may chat with a version other than the published one")
		}
		if asked < 0 {
			return 0, "", platform.Invalid(platform.Detail{Pointer: "/version", Message: "must be a positive version number"})
		}
		if asked == b.PublishedVersion {
			return asked, variantLive, nil
		}
		return asked, variantPreview, nil
	}
	if b.PublishedVersion == 0 {
		return 0, "", platform.Errorf(platform.CodeConflict, "bot %s has no published version yet; publish one, or pass a version to preview a draft", b.Slug)
	}
	if b.CanaryVersion > 0 && b.CanaryVersion != b.PublishedVersion && rand.IntN(100) < b.CanaryPercent {
		return b.CanaryVersion, variantCanary, nil
	}
	return b.PublishedVersion, variantLive, nil
}

// checkContext reports unknown context names, missing required ones and
// oversized values, each at /context/<name>, in name order.
func checkContext(ps *problems, declared []botconfig.ContextVariable, given map[string]string) {
	known := make(map[string]botconfig.ContextVariable, len(declared))
	for _, cv := range declared {
		known[cv.Name] = cv
	}
	names := make([]string, 0, len(given))
	for name := range given {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ptr := "/context/" + escapePointer(name)
		if _, ok := known[name]; !ok {
			ps.add(ptr, "is not a context variable of this bot")
			continue
		}
		if len(given[name]) > MaxContextValueSize {
			ps.add(ptr, "must be at most %d bytes", MaxContextValueSize)
		}
	}
	for _, cv := range declared {
		if v, ok := given[cv.Name]; cv.Required && cv.Default == "" && (!ok || strings.TrimSpace(v) == "") {
			if cv.From() == botconfig.SourceIdentity {
				ps.add("/context/"+escapePointer(cv.Name), "is required by this bot and comes from the signed user token's %q claim; send a user token that has it", cv.ClaimName())
				continue
			}
			ps.add("/context/"+escapePointer(cv.Name), "is required by this bot")
		}
	}
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// channelOf names where a dialog comes from, for the {{channel}} variable.
func channelOf(p *platform.Principal) string {
	switch {
	case p.KeyKind == auth.KindPublishable:
		return "widget"
	case p.Kind == platform.KindSession:
		return "admin"
	case p.Kind == platform.KindPlatform:
		return "platform"
	}
	return "api"
}

// List lists the tenant's dialogs, oldest first unless f.Order is
// "newest".
func (d Dialogs) List(ctx context.Context, p *platform.Principal, tenant string, f DialogFilter, opts platform.ListOptions) ([]Dialog, string, error) {
	r := d.rt
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActRead)
	if err != nil {
		return nil, "", err
	}
	sf, err := r.Dialogs().storeFilter(ctx, tenantID, f)
	if err != nil {
		return nil, "", err
	}
	rows, next, err := r.store.Tenant(tenantID).Dialogs().List(ctx, sf, store.Page{Cursor: opts.Cursor, Limit: opts.Limit, Desc: f.Order == "newest"})
	if err != nil {
		return nil, "", r.storeErr(ctx, "list dialogs", "dialog", err)
	}
	ids := make([]string, len(rows))
	for i := range rows {
		ids[i] = rows[i].ID
	}
	sums, err := r.store.Tenant(tenantID).Dialogs().Summarize(ctx, ids, f.Query)
	if err != nil {
		return nil, "", r.internal(ctx, "list dialogs: summaries", err)
	}
	out := make([]Dialog, len(rows))
	for i := range rows {
		if out[i], err = dialogView(&rows[i]); err != nil {
			return nil, "", r.internal(ctx, "list dialogs: view", err)
		}
		if s := sums[rows[i].ID]; s != nil {
			out[i].Summary = &DialogSummary{Snippet: s.Snippet, Messages: s.Messages, ToolErrors: s.ToolErrors,
				FeedbackUp: s.FeedbackUp, FeedbackDown: s.FeedbackDown}
		}
	}
	return out, next, nil
}

// storeFilter checks f and turns it into the store's filter.
func (d Dialogs) storeFilter(ctx context.Context, tenantID string, f DialogFilter) (store.DialogFilter, error) {
	r := d.rt
	sf := store.DialogFilter{Status: f.Status, UserID: f.UserID, Feedback: f.Feedback, Query: f.Query, ParentDialogID: f.Parent,
		Outcome: f.Outcome, Label: f.Label}
	var ps problems
	if f.Status != "" && !validStatus(f.Status) {
		ps.add("/status", "must be one of active, paused, handoff, closed")
	}
	switch f.Outcome {
	case "", OutcomeResolved, OutcomeHandedOff, OutcomeAbandoned, OutcomeFailed:
	default:
		ps.add("/outcome", "must be one of resolved, handed_off, abandoned, failed")
	}
	if f.Order != "" && f.Order != "oldest" && f.Order != "newest" {
		ps.add("/order", "must be oldest or newest")
	}
	switch f.Feedback {
	case "", store.FeedbackUp, store.FeedbackDown, store.FeedbackAny, store.FeedbackNone:
	default:
		ps.add("/feedback", "must be one of up, down, any, none")
	}
	if utf8.RuneCountInString(f.Query) > MaxSearchChars {
		ps.add("/q", "must be at most 200 characters")
	}
	sf.From = filterTime(&ps, "/from", f.From, false)
	sf.To = filterTime(&ps, "/to", f.To, true)
	if !sf.From.IsZero() && !sf.To.IsZero() && !sf.From.Before(sf.To) {
		ps.add("/to", "must be after from")
	}
	if err := ps.err(); err != nil {
		return sf, err
	}
	if f.Bot != "" {
		b, err := r.store.Tenant(tenantID).Bots().Get(ctx, f.Bot)
		if err != nil {
			return sf, r.storeErr(ctx, "list dialogs: bot", "bot", err)
		}
		sf.BotID = b.ID
	}
	return sf, nil
}

// filterTime parses a date (UTC; as the end of a range, the day after, so
// the range includes it) or an RFC 3339 time; "" is the zero time.
func filterTime(ps *problems, pointer, v string, end bool) time.Time {
	if v == "" {
		return time.Time{}
	}
	if day, err := time.Parse(time.DateOnly, v); err == nil {
		if end {
			return day.AddDate(0, 0, 1)
		}
		return day
	}
	at, err := time.Parse(time.RFC3339, v)
	if err != nil {
		ps.add(pointer, "must be a date like 2030-01-31 or a time like 2030-01-31T12:00:00Z")
	}
	return at
}

func validStatus(s string) bool {
	switch s {
	case DialogActive, DialogPaused, DialogHandoff, DialogClosed:
		return true
	}
	return false
}

// Get returns the tenant's dialog with its messages and tool calls.
// Readers of the tenant's dialogs may see any; a chat-only caller only
// dialogs of a bot it may chat with (the widget reloading its history).
func (di Dialogs) Get(ctx context.Context, p *platform.Principal, tenant, dialog, origin string) (DialogDetail, error) {
	r := di.rt
	d, err := r.Dialogs().readableDialog(ctx, p, tenant, dialog, origin)
	if err != nil {
		return DialogDetail{}, err
	}
	t := r.store.Tenant(d.TenantID)
	msgs, err := t.Messages().List(ctx, d.ID, 0)
	if err != nil {
		return DialogDetail{}, r.internal(ctx, "get dialog: messages", err)
	}
	if err := r.Dialogs().settleAbandoned(ctx, d, msgs); err != nil {
		return DialogDetail{}, err
	}
	calls, err := t.Messages().ToolCalls(ctx, d.ID)
	if err != nil {
		return DialogDetail{}, r.internal(ctx, "get dialog: tool calls", err)
	}
	view, err := dialogView(d)
	if err != nil {
		return DialogDetail{}, r.internal(ctx, "get dialog: view", err)
	}
	var seen *endUserView
	if p.KeyKind == auth.KindPublishable {
		bot, err := r.botFor(ctx, d)
		if err != nil {
			return DialogDetail{}, err
		}
		seen = viewFor(p, bot)
	}
	ratings, err := t.Feedback().List(ctx, d.ID)
	if err != nil {
		return DialogDetail{}, r.internal(ctx, "get dialog: feedback", err)
	}
	out := DialogDetail{Dialog: view, Messages: make([]Message, len(msgs)), ToolCalls: make([]ToolCall, len(calls)),
		Feedback: make([]apiclient.Feedback, len(ratings))}
	for i := range ratings {
		out.Feedback[i] = feedbackView(&ratings[i])
	}
	for i := range msgs {
		out.Messages[i] = seen.message(messageView(&msgs[i]))
	}
	for i := range calls {
		out.ToolCalls[i] = seen.toolCall(toolCallView(&calls[i]))
	}
	return out, nil
}

// settleAbandoned marks streaming replies interrupted when no live lease
// stands behind them (their server crashed), so a reader never waits on a
// reply that will not come. The next run would mark them anyway.
func (di Dialogs) settleAbandoned(ctx context.Context, d *store.Dialog, msgs []store.Message) error {
	r := di.rt
	streaming := false
	for i := range msgs {
		streaming = streaming || msgs[i].Status == store.MessageStreaming
	}
	if !streaming {
		return nil
	}
	l, err := r.store.Tenant(d.TenantID).Leases().Get(ctx, d.ID)
	switch {
	case err == nil && l.ExpiresAt.After(r.now()):
		return nil // a live run is writing them
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return r.internal(ctx, "get dialog: lease", err)
	}
	if _, err := r.store.Tenant(d.TenantID).Messages().MarkInterrupted(ctx, d.ID); err != nil {
		return r.internal(ctx, "get dialog: mark interrupted", err)
	}
	for i := range msgs {
		if msgs[i].Status == store.MessageStreaming {
			msgs[i].Status = store.MessageInterrupted
		}
	}
	return nil
}

func (di Dialogs) readableDialog(ctx context.Context, p *platform.Principal, tenant, dialog, origin string) (*store.Dialog, error) {
	r := di.rt
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActRead)
	var pe *platform.Error
	if errors.As(err, &pe) && pe.Code == platform.CodeForbidden {
		return r.turnDialog(ctx, p, tenant, dialog, origin)
	}
	if err != nil {
		return nil, err
	}
	d, err := r.store.Tenant(tenantID).Dialogs().Get(ctx, dialog)
	if err != nil {
		return nil, r.storeErr(ctx, "get dialog", "dialog", err)
	}
	return d, nil
}

func dialogView(d *store.Dialog) (Dialog, error) {
	out := Dialog{ID: d.ID, BotID: d.BotID, Version: d.VersionNumber, Preview: d.Preview, UserID: d.UserID,
		Channel: d.Channel, Context: map[string]string{}, Status: d.Status, ClosedReason: d.ClosedReason,
		ParentDialogID: d.ParentDialogID, ParentCallID: d.ParentCallID, Outcome: d.Outcome, OutcomeReason: d.OutcomeReason,
		OutcomeAt: d.OutcomeAt, Rating: d.Rating, Labels: d.Labels, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
	if err := json.Unmarshal([]byte(d.Context), &out.Context); err != nil {
		return out, fmt.Errorf("dialog %s: context: %w", d.ID, err)
	}
	if d.Status == DialogPaused {
		st, err := loadState(d)
		if err != nil {
			return out, err
		}
		for _, pc := range st.Pending {
			out.Pending = append(out.Pending, PendingCall{ID: pc.ID, Name: pc.Name, Arguments: pc.Arguments, Kind: pc.Kind})
		}
	}
	return out, nil
}

func messageView(m *store.Message) Message {
	out := Message{ID: m.ID, Seq: m.Seq, Kind: m.Kind, Role: m.Role, Content: withoutImageData(json.RawMessage(m.Content)),
		Text: m.Text, Model: m.Model, Provider: m.Provider, Version: m.BotVersion, Status: m.Status, CreatedAt: m.CreatedAt}
	if m.InputTokens != 0 || m.OutputTokens != 0 {
		out.Usage = &Usage{InputTokens: m.InputTokens, OutputTokens: m.OutputTokens}
	}
	if m.Kind == string(agent.KindOperator) || m.Kind == string(agent.KindAssistant) && strings.Contains(m.Meta, `"citations"`) {
		var meta messageMeta
		_ = json.Unmarshal([]byte(m.Meta), &meta) // a row this package wrote; no author or citations is all a bad one costs
		out.Author, out.Citations = meta.Author, meta.Citations
	}
	return out
}

func toolCallView(c *store.ToolCall) ToolCall {
	return ToolCall{ID: c.CallID, MessageID: c.MessageID, Name: c.Name, Arguments: json.RawMessage(c.Arguments),
		Result: c.Result, IsError: c.IsError, Status: c.Status, DurationMS: c.DurationMS}
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
