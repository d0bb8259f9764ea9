package dialog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/guardrail"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/pii"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/tool"
	"github.com/parleyhq/parley/pkg/webhook"
)

// guard is one dialog's guardrails at work (docs/guardrails.md): it masks
// personal data with the dialog's vault, puts the real values back in a
// tenant tool's arguments, screens the user's text and the model's
// answers (agent.Guard), and flags tool outputs that look like prompt
// injections. A request makes one as soon as it knows the dialog's bot,
// and carries it in its context (withGuard).
type guard struct {
	r                         *Runtime
	tenantID, dialogID, botID string
	bot                       *botconfig.Bot
	g                         botconfig.Guardrails

	mu      sync.Mutex
	vault   *pii.Vault // nil until loaded
	version int64
	// flags are the tool calls whose output looked like a prompt
	// injection, by call id, with the signal that said so.
	flags map[string]string
	// fired is the last rule that stopped the run, for its action.
	fired *agent.Verdict
}

func (r *Runtime) newGuard(d *store.Dialog, bot *botconfig.Bot) *guard {
	return &guard{r: r, tenantID: d.TenantID, dialogID: d.ID, botID: d.BotID, bot: bot, g: bot.Guardrails, flags: map[string]string{}}
}

type guardKey struct{}

// withGuard returns ctx carrying g; log records written with it have
// personal data masked when the bot asks for it in logs.
func withGuard(ctx context.Context, g *guard) context.Context {
	if g == nil {
		return ctx
	}
	ctx = context.WithValue(ctx, guardKey{}, g)
	if g.g.Masks(botconfig.PIIInLogs) {
		ctx = pii.WithLogMasking(ctx, g.g.PII)
	}
	return ctx
}

func guardFrom(ctx context.Context) *guard {
	g, _ := ctx.Value(guardKey{}).(*guard)
	return g
}

// inputGuard is the guard of a dialog a user's text is about to enter,
// read before the dialog's lease so the text is masked before it is
// stored anywhere; nil when the dialog is not found or p may not chat
// with it (the lease then refuses, and nothing was written for it).
func (r *Runtime) inputGuard(ctx context.Context, p *platform.Principal, tenantID, dialogID string) (*guard, error) {
	d, ok := r.dialogBots.get(tenantID, dialogID)
	if !ok {
		full, err := r.store.Tenant(tenantID).Dialogs().Get(ctx, dialogID)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, r.internal(ctx, "guardrails: dialog", err)
		}
		d = &store.Dialog{TenantID: full.TenantID, ID: full.ID, BotID: full.BotID, VersionNumber: full.VersionNumber}
		r.dialogBots.put(d)
	}
	if !mayChat(p, d) {
		return nil, nil
	}
	bot, err := r.botFor(ctx, d)
	if err != nil {
		return nil, err
	}
	return r.newGuard(d, bot), nil
}

// dialogBotCache remembers which bot version answers a dialog, which
// never changes, so a warm turn's guard costs no read of the dialog.
type dialogBotCache struct {
	mu      sync.Mutex
	max     int
	dialogs map[string]*store.Dialog // tenant id + "/" + dialog id → its bot and version only
}

func newDialogBotCache(max int) *dialogBotCache {
	return &dialogBotCache{max: max, dialogs: map[string]*store.Dialog{}}
}

func (c *dialogBotCache) get(tenantID, dialogID string) (*store.Dialog, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.dialogs[tenantID+"/"+dialogID]
	return d, ok
}

func (c *dialogBotCache) put(d *store.Dialog) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.dialogs) >= c.max {
		for k := range c.dialogs { // evict one arbitrary entry; a miss costs one read
			delete(c.dialogs, k)
			break
		}
	}
	c.dialogs[d.TenantID+"/"+d.ID] = d
}

// maskInput masks the personal data of a user's text when the bot keeps
// the dialog's texts with placeholders.
func (g *guard) maskInput(ctx context.Context, text string) (string, error) {
	if g == nil {
		return text, nil
	}
	return g.mask(ctx, text)
}

// maxVaultTries bounds how often a mask is redone after another writer
// saved the dialog's vault first.
const maxVaultTries = 5

// mask replaces the personal data in text with the dialog's placeholders,
// saving the vault before the masked text goes anywhere, so a placeholder
// is never stored without its value.
func (g *guard) mask(ctx context.Context, text string) (string, error) {
	if !g.g.MasksText() || text == "" {
		return text, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for range maxVaultTries {
		if err := g.loadLocked(ctx); err != nil {
			return "", err
		}
		masked := g.vault.Mask(g.g.PII, text)
		if !g.vault.Changed() {
			return masked, nil
		}
		data, err := json.Marshal(g.vault)
		if err != nil {
			return "", err
		}
		version, err := g.r.svc.PIIVaults().Save(ctx, g.tenantID, g.dialogID, g.version, data)
		if errors.Is(err, platform.ErrVaultChanged) {
			g.vault = nil // another request added placeholders: read them and mask again
			continue
		}
		if err != nil {
			return "", err
		}
		g.version = version
		g.vault.Saved()
		return masked, nil
	}
	return "", g.r.internal(ctx, "guardrails: vault", errors.New("the dialog's vault kept changing"))
}

func (g *guard) loadLocked(ctx context.Context) error {
	if g.vault != nil {
		return nil
	}
	data, version, err := g.r.svc.PIIVaults().Of(ctx, g.tenantID, g.dialogID)
	if err != nil {
		return err
	}
	v, err := pii.LoadVault(data)
	if err != nil {
		return g.r.internal(ctx, "guardrails: vault", err)
	}
	g.vault, g.version = v, version
	return nil
}

// unmaskJSON puts the real values back for the placeholders in a tool
// call's arguments. The vault is read again: the placeholders may be
// another request's, made since this run loaded it.
func (g *guard) unmaskJSON(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	if !g.g.MasksText() {
		return args, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.vault = nil
	if err := g.loadLocked(ctx); err != nil {
		return nil, err
	}
	return g.vault.UnmaskJSON(args), nil
}

// Screen implements agent.Guard with the bot's rules: the length limit
// (input only), blocked topics, then the moderation provider.
func (g *guard) Screen(ctx context.Context, where, text string) (*agent.Verdict, error) {
	rule, err := g.rule(ctx, where, text)
	if err != nil || rule == "" {
		return nil, err
	}
	g.r.metrics.guardrails.WithLabelValues(rule, where).Inc()
	g.r.log.InfoContext(ctx, "dialog: guardrail fired", "dialog", g.dialogID, "rule", rule, "where", where, "action", g.g.Action)
	if err := g.announce(ctx, guardrailFiredData{Rule: rule, Where: where, Action: g.g.Action}); err != nil {
		return nil, err
	}
	v := &agent.Verdict{Rule: rule, Where: where, Reply: g.g.Reply}
	g.mu.Lock()
	g.fired = v
	g.mu.Unlock()
	return v, nil
}

func (g *guard) rule(ctx context.Context, where, text string) (string, error) {
	if rule := g.g.Rule(where, text); rule != "" {
		return rule, nil
	}
	m := g.g.Moderation
	if m == nil || (where == agent.WhereInput && !m.Input) || (where == agent.WhereOutput && !m.Output) {
		return "", nil
	}
	mod, err := g.moderator(ctx)
	if err != nil {
		return "", err
	}
	res, err := mod.Moderate(ctx, m.Model, text)
	if err != nil {
		return "", fmt.Errorf("moderation: %w", err)
	}
	if res.Flagged {
		return guardrail.RuleModeration, nil
	}
	return "", nil
}

// moderator is the provider the bot's moderation names.
func (g *guard) moderator(ctx context.Context) (llm.Moderator, error) {
	providers, err := g.r.providersFor(ctx, g.tenantID, g.bot)
	if err != nil {
		return nil, err
	}
	p, ok := providers.get(g.r.opts.Provider, g.g.Moderation.Provider)
	if !ok || p == nil {
		return nil, fmt.Errorf("moderation: no provider %q", g.g.Moderation.Provider)
	}
	if m, ok := p.(meteredProvider); ok {
		p = m.Provider // the meter counts chat calls; a moderation is not one
	}
	mod, ok := p.(llm.Moderator)
	if !ok {
		return nil, fmt.Errorf("moderation: provider %q has no moderation endpoint", p.Name())
	}
	return mod, nil
}

// verdict is the rule that stopped the run, nil when none did.
func (g *guard) verdict() *agent.Verdict {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.fired
}

// handsOff says the run stopped on a rule whose action hands off.
func (g *guard) handsOff(out agent.Outcome) bool {
	return g != nil && out.StopReason == agent.StopGuardrail && g.verdict() != nil && g.g.Action == guardrail.ActionHandoff
}

// ends says the run stopped on a rule whose action ends the dialog.
func (g *guard) ends(out agent.Outcome) bool {
	return g != nil && out.StopReason == agent.StopGuardrail && g.verdict() != nil && g.g.Action == guardrail.ActionEnd
}

// flag notes a tool output that looks like a prompt injection: a warning
// in the log now, and a guardrail event and a note in the dialog when
// the loop records the result (takeFlag).
func (g *guard) flag(ctx context.Context, callID, name, signal, output string) {
	g.r.metrics.guardrails.WithLabelValues(guardrail.RulePromptInjection, guardrail.WhereTool).Inc()
	g.r.log.WarnContext(ctx, "dialog: a tool's output looks like a prompt injection", "dialog", g.dialogID,
		"tool", name, "signal", signal, "action", g.g.ToolInjection, "output", excerpt(output, 200))
	err := g.announce(ctx, guardrailFiredData{Rule: guardrail.RulePromptInjection, Where: guardrail.WhereTool, Action: g.g.ToolInjection, Tool: name})
	if err != nil {
		g.r.log.ErrorContext(ctx, "dialog: guardrail.fired", "dialog", g.dialogID, "err", err)
	}
	if callID == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.flags[callID] = name + ": " + signal
}

// announce writes guardrail.fired when the tenant takes it. The rule
// firing is the fact: nothing else is written with it.
func (g *guard) announce(ctx context.Context, data guardrailFiredData) error {
	data.DialogID, data.BotID = g.dialogID, g.botID
	ev := platform.Event{TenantID: g.tenantID, BotID: g.botID, DialogID: g.dialogID, Type: webhook.GuardrailFired}
	return g.r.svc.Webhooks().WithEvent(ctx, ev, func(*store.Store) (any, error) { return data, nil })
}

// takeFlag returns the flag of a tool call, once.
func (g *guard) takeFlag(callID string) (string, bool) {
	if g == nil {
		return "", false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	f, ok := g.flags[callID]
	delete(g.flags, callID)
	return f, ok
}

// withheldInjection replaces a blocked tool output.
const withheldInjection = "the tool's output was withheld: it looked like instructions rather than data"

// wrap is the guard around one of the tenant's tools (toolbox.Options.Guard).
func (g *guard) wrap(t tool.Tool) tool.Tool { return guardedTool{Tool: t, g: g} }

// guardedTool runs a tenant tool with the real values behind the
// placeholders of its arguments, and gives the model its output masked
// and screened for prompt injection. Here, just before the tool runs, is
// the only place the real values leave the vault.
type guardedTool struct {
	tool.Tool
	g *guard
}

// Call implements tool.Tool.
func (t guardedTool) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	name := t.Definition().Name
	args, err := t.g.unmaskJSON(ctx, args)
	if err != nil {
		return tool.Errorf("the tool could not be given its arguments"), nil
	}
	res, callErr := t.Tool.Call(ctx, args)
	if callErr != nil {
		if ctx.Err() != nil && errors.Is(callErr, ctx.Err()) {
			return res, callErr
		}
		// An error's text reaches the model too: masked like an output.
		res.IsError = true
		if res.Content == "" {
			res.Content = callErr.Error()
		}
	}
	if res.Content, err = t.g.mask(ctx, res.Content); err != nil {
		return tool.Result{Content: "the tool's output could not be screened", IsError: true, Meta: res.Meta}, nil
	}
	if t.g.g.ToolInjection == "off" {
		return res, nil
	}
	if signal, ok := guardrail.Injection(res.Content); ok {
		t.g.flag(ctx, tool.CallID(ctx), name, signal, res.Content)
		if t.g.g.ToolInjection == "block" {
			res = tool.Result{Content: withheldInjection, IsError: true, Meta: res.Meta}
		}
	}
	return res, nil
}

// TakesCallID implements tool.CallIDTaker: a flag names its call.
func (guardedTool) TakesCallID() bool { return true }

// KeepLast passes the wrapped tool's tool.Ephemeral on.
func (t guardedTool) KeepLast() int {
	e, ok := t.Tool.(tool.Ephemeral)
	if !ok {
		return 0
	}
	return e.KeepLast()
}

// RequiresConfirmation passes the wrapped tool's tool.ConfirmationRequired on.
func (t guardedTool) RequiresConfirmation() bool {
	c, ok := t.Tool.(tool.ConfirmationRequired)
	return ok && c.RequiresConfirmation()
}

// noteFlag writes what a flagged tool output gets in the dialog once its
// result is recorded: a guardrail event and a note in the dialog log.
func (run *dialogRun) noteFlag(ctx context.Context, m agent.Message) error {
	res := m.ToolResult()
	if res == nil || m.Kind != agent.KindToolResult {
		return nil
	}
	flag, ok := run.guard.takeFlag(res.ToolUseID)
	if !ok {
		return nil
	}
	run.rec.emit(agent.Guardrail{Rule: guardrail.RulePromptInjection, Where: guardrail.WhereTool})
	note := agent.Message{Kind: agent.KindSystemEvent, Origin: agent.OriginLoop, Turn: m.Turn, Time: m.Time,
		Message: llm.UserText("guardrail prompt_injection flagged the output of " + flag + " (" + run.bot.Guardrails.ToolInjection + ")")}
	return run.onMessage(ctx, note)
}

// maskHistory masks the personal data of a history a new dialog is seeded
// with (the OpenAI face's earlier messages) into vault, before any of it
// is stored: texts, tool arguments and tool results. The blocks are
// copied, so the caller's messages are not changed.
func maskHistory(g botconfig.Guardrails, vault *pii.Vault, history []agent.Message) []agent.Message {
	if !g.MasksText() || len(history) == 0 {
		return history
	}
	out := make([]agent.Message, len(history))
	for i, m := range history {
		blocks := make([]llm.Block, len(m.Content))
		for j, b := range m.Content {
			switch {
			case b.Type == llm.BlockText:
				b.Text = vault.Mask(g.PII, b.Text)
			case b.ToolUse != nil:
				use := *b.ToolUse
				// Masks never hold a quote or a backslash, so the
				// arguments stay the JSON they were.
				use.Arguments = json.RawMessage(vault.Mask(g.PII, string(use.Arguments)))
				b.ToolUse = &use
			case b.ToolResult != nil:
				res := *b.ToolResult
				res.Content = vault.Mask(g.PII, res.Content)
				b.ToolResult = &res
			}
			blocks[j] = b
		}
		m.Content = blocks
		out[i] = m
	}
	return out
}
