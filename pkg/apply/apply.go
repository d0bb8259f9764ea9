package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/configdiff"
	"github.com/parleyhq/parley/pkg/platform"
)

// Options say how Run applies.
type Options struct {
	// Out receives what changed (or, with DryRun, would), line by line,
	// and the closing summary; Err what failed.
	Out, Err io.Writer
	// DryRun writes nothing; Prune also deletes what the directory no
	// longer has.
	DryRun, Prune bool
}

// Stats count what one apply changed, for its closing line.
type Stats struct {
	Tenants, TenantsCreated, Bots, BotsCreated, VersionsCreated, Published, Deleted, Secrets, Failed int
	// Changed counts providers, webhooks, bot settings and knowledge
	// bases created or changed.
	Changed int
	// Sources counts knowledge sources added or replaced.
	Sources int
}

// Run makes the target match the checked tenant directories, one tenant
// at a time, and ends with a summary line on opts.Out. Bots are compared
// with their live (published) version: one that matches is left alone;
// one that differs gets a new version (only when it differs from the
// newest too) and that version is published. Applying the same directory
// twice changes nothing the second time. What fails is reported on
// opts.Err and counted in Stats.Failed; the error is the context's.
func Run(ctx context.Context, target Target, tenants []Tenant, opts Options) (Stats, error) {
	a := &applier{target: target, out: opts.Out, errw: opts.Err, dryRun: opts.DryRun, prune: opts.Prune}
	for _, t := range tenants {
		if err := ctx.Err(); err != nil {
			return a.stats, err
		}
		a.tenant(ctx, t)
	}
	s := a.stats
	verb := "Applied"
	if opts.DryRun {
		verb = "Dry run, nothing written:"
	}
	fmt.Fprintf(opts.Out, "%s %d tenants and %d bots: %d tenants created, %d bots created, %d new versions, %d publishes, %d secrets set, %d providers, webhooks and settings changed, %d knowledge sources added or replaced, %d deleted.\n",
		verb, s.Tenants, s.Bots, s.TenantsCreated, s.BotsCreated, s.VersionsCreated, s.Published, s.Secrets, s.Changed, s.Sources, s.Deleted)
	if s.Failed > 0 {
		fmt.Fprintf(opts.Err, "%d item(s) failed; see above.\n", s.Failed)
	}
	return s, nil
}

// applier applies tenant directories one by one, one function per kind of
// resource. Files were checked first; what can still fail here (the
// database, the server, a permission, a publish whose tests fail) is
// reported and counted. On the database it rolls back its tenant (see
// tenant); through the API the rest still applies. Other tenants apply
// either way.
type applier struct {
	target        Target
	out, errw     io.Writer
	dryRun, prune bool
	stats         Stats
}

func (a *applier) fail(path string, err error) {
	a.stats.Failed++
	var pe *platform.Error
	var ae *apiclient.Error
	switch {
	case errors.As(err, &pe) && len(pe.Details) > 0:
		fmt.Fprintf(a.errw, "%s: %s\n", path, pe.Message)
		for _, d := range pe.Details {
			fmt.Fprintf(a.errw, "%s: %s: %s\n", path, botconfig.DisplayPointer(d.Pointer), d.Message)
		}
	case errors.As(err, &ae) && len(ae.Details) > 0:
		fmt.Fprintf(a.errw, "%s: %s\n", path, ae.Message)
		for _, d := range ae.Details {
			fmt.Fprintf(a.errw, "%s: %s: %s\n", path, botconfig.DisplayPointer(d.Pointer), d.Message)
		}
	default:
		fmt.Fprintf(a.errw, "%s: %v\n", path, err)
	}
}

// errTenantFailed rolls back a tenant's transaction after a change of it
// failed (and was reported).
var errTenantFailed = errors.New("a change of the tenant failed")

// tenant applies one tenant directory in one transaction when the target
// has them (the database): a change that fails rolls back every change
// to the tenant, and what was printed about them is withheld (keys and
// secrets printed would never have been stored). Through the API each
// change stands on its own, and what failed is reported beside what
// applied.
func (a *applier) tenant(ctx context.Context, t Tenant) {
	before, out, target := a.stats, a.out, a.target
	var buf bytes.Buffer
	a.out = &buf
	atomic, err := target.atomically(ctx, func(tx Target) error {
		a.target = tx
		a.applyTenant(ctx, t)
		if a.stats.Failed > before.Failed {
			return errTenantFailed
		}
		return nil
	})
	a.out, a.target = out, target
	if !atomic || err == nil {
		out.Write(buf.Bytes())
		return
	}
	failed := a.stats.Failed
	a.stats = before
	a.stats.Tenants++
	a.stats.Failed = failed
	if !errors.Is(err, errTenantFailed) {
		a.fail(t.file, err) // the commit itself failed
	}
	fmt.Fprintf(out, "tenant %s: not applied: a change failed (see above), so every change to it was rolled back\n", t.slug)
}

// applyTenant applies one tenant directory: the tenant, its secrets,
// identity, providers, members, knowledge bases, bots, channels and
// webhooks, in the order they depend on each other.
func (a *applier) applyTenant(ctx context.Context, t Tenant) {
	a.stats.Tenants++
	exists, err := a.target.tenantExists(ctx, t.slug)
	if err != nil {
		a.fail(t.file, err)
		return
	}
	switch {
	case exists:
		fmt.Fprintf(a.out, "tenant %s: exists\n", t.slug)
	case a.dryRun:
		a.stats.TenantsCreated++
		fmt.Fprintf(a.out, "tenant %s: would be created\n", t.slug)
	default:
		id, key, err := a.target.createTenant(ctx, t.slug, t.name)
		if err != nil {
			a.fail(t.file, err)
			return
		}
		a.stats.TenantsCreated++
		fmt.Fprintf(a.out, "tenant %s: created (%s)\n  admin API key (shown this once; store it now): %s\n", t.slug, id, key)
	}
	a.retention(ctx, t, exists)
	a.idlePeriod(ctx, t, exists)
	a.secrets(ctx, t, exists)
	a.identity(ctx, t, exists)
	a.sso(ctx, t, exists)
	a.twoFactor(ctx, t, exists)
	a.providers(ctx, t, exists) // after the secrets, before the bots that name them
	a.members(ctx, t, exists)
	a.knowledge(ctx, t, exists) // after the providers that embed, before the bots that search
	a.bots(ctx, t, exists)
	a.channels(ctx, t, exists)
	a.webhooks(ctx, t, exists) // after the bots they may be filtered to
}

// secrets sets every secret the tenant file names from its environment
// variable (values are write-only, so each is set every time), and with
// --prune deletes the tenant's other secrets.
func (a *applier) secrets(ctx context.Context, t Tenant, exists bool) {
	for _, s := range t.secrets {
		a.setSecret(ctx, t.slug, t.file, s)
	}
	if !a.prune || !exists {
		return
	}
	names, err := a.target.secretNames(ctx, t.slug)
	if err != nil {
		a.fail(t.file, err)
		return
	}
	for _, name := range names {
		if t.hasSecret(name) {
			continue
		}
		a.remove(t.file, "secret "+name, func() error { return a.target.deleteSecret(ctx, t.slug, name) })
	}
}

// setSecret sets one secret from its environment variable, or says it
// would.
func (a *applier) setSecret(ctx context.Context, tenant, file string, s secretSpec) {
	if a.dryRun {
		fmt.Fprintf(a.out, "  secret %s: would be set from $%s\n", s.name, s.env)
		a.stats.Secrets++
		return
	}
	if err := a.target.putSecret(ctx, tenant, s.name, s.value); err != nil {
		a.fail(file, err)
		return
	}
	a.stats.Secrets++
	fmt.Fprintf(a.out, "  secret %s: set from $%s\n", s.name, s.env)
}

// retention sets the tenant's retention period from tenant.json unless it
// is so already.
func (a *applier) retention(ctx context.Context, t Tenant, exists bool) {
	if t.retentionDays == nil {
		return
	}
	days := *t.retentionDays
	if exists {
		cur, err := a.target.retentionDays(ctx, t.slug)
		if err != nil {
			a.fail(t.file, err)
			return
		}
		if cur == days {
			return
		}
	} else if days == 0 {
		return
	}
	if a.dryRun {
		fmt.Fprintf(a.out, "  retention: would delete dialogs %d days after their last activity (0: kept)\n", days)
		return
	}
	if err := a.target.setRetentionDays(ctx, t.slug, days); err != nil {
		a.fail(t.file, err)
		return
	}
	fmt.Fprintf(a.out, "  retention: dialogs deleted %d days after their last activity (0: kept)\n", days)
}

// idlePeriod sets how long the tenant's dialogs stay quiet before their
// outcome is computed, from tenant.json, unless it is so already.
func (a *applier) idlePeriod(ctx context.Context, t Tenant, exists bool) {
	if t.idleMinutes == nil {
		return
	}
	minutes := *t.idleMinutes
	cur, err := a.target.idleMinutes(ctx, t.slug)
	if exists && err != nil {
		a.fail(t.file, err)
		return
	}
	if err == nil && cur == minutes {
		return
	}
	if a.dryRun {
		fmt.Fprintf(a.out, "  idle period: would compute outcomes after %d quiet minutes (0: at close)\n", minutes)
		return
	}
	if err := a.target.setIdleMinutes(ctx, t.slug, minutes); err != nil {
		a.fail(t.file, err)
		return
	}
	fmt.Fprintf(a.out, "  idle period: outcomes computed after %d quiet minutes (0: at close)\n", minutes)
}

// identity sets the tenant's JWKS identity settings from tenant.json
// unless they are so already.
func (a *applier) identity(ctx context.Context, t Tenant, exists bool) {
	if t.identity == nil {
		return
	}
	if exists {
		got, hasSecret, found, err := a.target.identity(ctx, t.slug)
		if err != nil {
			a.fail(t.file, err)
			return
		}
		if found && !hasSecret && got == *t.identity {
			fmt.Fprintf(a.out, "  identity: unchanged\n")
			return
		}
	}
	if a.dryRun {
		fmt.Fprintf(a.out, "  identity: would verify user tokens with the keys at %s\n", t.identity.JWKSURL)
		return
	}
	if err := a.target.putIdentity(ctx, t.slug, *t.identity); err != nil {
		a.fail(t.file, err)
		return
	}
	fmt.Fprintf(a.out, "  identity: user tokens verified with the keys at %s\n", t.identity.JWKSURL)
}

// bots applies each bot file, then with --prune deletes the tenant's bots
// that have no file.
func (a *applier) bots(ctx context.Context, t Tenant, exists bool) {
	live := map[string]liveBot{}
	if exists {
		var err error
		if live, err = a.target.liveBots(ctx, t.slug); err != nil {
			a.fail(t.file, err)
			return
		}
	}
	for _, b := range t.bots {
		cur, ok := live[b.slug]
		a.stats.Bots++
		if ok {
			a.requireTests(ctx, t.slug, b, cur.requireTests)
		}
		failed := a.stats.Failed
		a.bot(ctx, t.slug, b, cur, ok)
		if a.stats.Failed == failed { // a bot that did not apply gets no canary
			a.canary(ctx, t.slug, b, cur)
		}
	}
	if !a.prune {
		return
	}
	for _, slug := range callersFirst(t, live) {
		a.remove(t.file, "bot "+slug, func() error { return a.target.deleteBot(ctx, t.slug, slug) })
	}
}

// callersFirst lists the live bots the directory no longer has, each before
// the ones its live config calls as agents: a bot another bot's live config
// calls cannot be deleted.
func callersFirst(t Tenant, live map[string]liveBot) []string {
	var pruned []botSpec
	for _, slug := range sortedKeys(live) {
		if t.hasBot(slug) {
			continue
		}
		var cfg struct {
			Agents []botconfig.AgentRef `json:"agents"`
		}
		_ = json.Unmarshal(live[slug].config, &cfg) // a config that is no object calls no agent
		b := botSpec{slug: slug}
		for _, a := range cfg.Agents {
			b.agents = append(b.agents, a.Bot)
		}
		pruned = append(pruned, b)
	}
	// agentsFirst puts each bot after those it calls; deleting goes the
	// other way.
	order := agentsFirst(pruned)
	slugs := make([]string, len(order))
	for i, b := range order {
		slugs[len(order)-1-i] = b.slug
	}
	return slugs
}

// bot creates the bot, or compares its files with the live version and,
// when they differ, saves them as a version and publishes it.
func (a *applier) bot(ctx context.Context, tenant string, b botSpec, live liveBot, exists bool) {
	if exists && live.published > 0 && live.fingerprint == b.fingerprint && sameJSON(live.tests, b.tests) {
		fmt.Fprintf(a.out, "  bot %s: unchanged, version %d live\n", b.slug, live.published)
		return
	}
	if a.dryRun {
		a.describeChange(b, live, exists)
		if !exists {
			a.requireTests(ctx, tenant, b, false)
		}
		return
	}
	if !exists {
		n, err := a.target.createBot(ctx, tenant, b.slug, b.config, b.tests)
		if err != nil {
			a.fail(b.file, err)
			return
		}
		a.stats.BotsCreated++
		a.stats.VersionsCreated++
		a.requireTests(ctx, tenant, b, false)
		a.publish(ctx, tenant, b, n, "created")
		return
	}
	n, created, err := a.target.saveVersion(ctx, tenant, b.slug, b.config, b.tests)
	if err != nil {
		a.fail(b.file, err)
		return
	}
	what := fmt.Sprintf("matches version %d", n)
	if created {
		a.stats.VersionsCreated++
		what = fmt.Sprintf("version %d saved", n)
	}
	a.publish(ctx, tenant, b, n, what)
}

func (a *applier) publish(ctx context.Context, tenant string, b botSpec, n int, what string) {
	if err := a.target.publish(ctx, tenant, b.slug, n); err != nil {
		a.fail(b.file, err)
		return
	}
	a.stats.Published++
	fmt.Fprintf(a.out, "  bot %s: %s, version %d published\n", b.slug, what, n)
}

// describeChange prints what a dry run would do to a bot, with the diff
// from its live config to the file.
func (a *applier) describeChange(b botSpec, live liveBot, exists bool) {
	switch {
	case !exists:
		a.stats.BotsCreated++
		a.stats.VersionsCreated++
		a.stats.Published++
		fmt.Fprintf(a.out, "  bot %s: would be created and published\n", b.slug)
		return
	case live.published == 0:
		fmt.Fprintf(a.out, "  bot %s: has no live version; would save and publish the file\n", b.slug)
	default:
		fmt.Fprintf(a.out, "  bot %s: differs from live version %d; would save a new version and publish it\n", b.slug, live.published)
	}
	a.stats.VersionsCreated++
	a.stats.Published++
	d, err := configdiff.Compare(live.config, b.config, fmt.Sprintf("live version %d", live.published), b.file)
	if err != nil {
		a.fail(b.file, err)
		return
	}
	for _, line := range strings.SplitAfter(d.Unified, "\n") {
		if line != "" {
			fmt.Fprint(a.out, "    ", line)
		}
	}
	if !sameJSON(live.tests, b.tests) {
		fmt.Fprintf(a.out, "    (the tests differ too)\n")
	}
}

// remove deletes one pruned resource, or says it would.
func (a *applier) remove(file, what string, del func() error) {
	if a.dryRun {
		a.stats.Deleted++
		fmt.Fprintf(a.out, "  %s: not in the directory; would be deleted\n", what)
		return
	}
	if err := del(); err != nil {
		a.fail(file, err)
		return
	}
	a.stats.Deleted++
	fmt.Fprintf(a.out, "  %s: not in the directory; deleted\n", what)
}
