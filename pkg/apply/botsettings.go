package apply

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/botconfig"
)

// botSettingsFile is one bot's entry in tenant.json's "bots": how the bot
// is released, which is not part of its config and so not of a version.
type botSettingsFile struct {
	// RequirePassingTests, when set, is applied: a publish (and a canary)
	// then needs the version's tests to pass.
	RequirePassingTests *bool `json:"require_passing_tests,omitempty"`
	// Canary sends a share of new dialogs to the candidate config in
	// canary/<bot>.json.
	Canary *canaryFile `json:"canary,omitempty"`
}

type canaryFile struct {
	Percent int `json:"percent"`
}

// canarySpec is a checked canary: the candidate config and its share.
type canarySpec struct {
	file        string
	percent     int
	config      []byte
	fingerprint string
	warnings    []Problem
}

// readBotSettings checks tenant.json's "bots" against the directory's bot
// files and reads each canary's candidate config, setting them on t's
// bots. A canary file no entry names is a problem too.
func readBotSettings(dir, tenantFile string, settings map[string]botSettingsFile, t *Tenant, opts botconfig.Options) []Problem {
	var ps []Problem
	for _, slug := range sortedKeys(settings) {
		s, at := settings[slug], "/bots/"+slug
		i := t.botIndex(slug)
		if i < 0 {
			ps = append(ps, Problem{tenantFile, at, fmt.Sprintf("%q is not a bot of this directory (bots/%s.json)", slug, slug)})
			continue
		}
		b := &t.bots[i]
		b.requireTests = s.RequirePassingTests
		if s.Canary == nil {
			continue
		}
		if s.Canary.Percent < 1 || s.Canary.Percent > 100 {
			ps = append(ps, Problem{tenantFile, at + "/canary/percent", "the share of new dialogs the candidate takes: 1 to 100"})
		}
		c, cps := readCanary(filepath.Join(dir, "canary", slug+".json"), opts)
		ps = append(ps, cps...)
		t.Warnings = append(t.Warnings, c.warnings...)
		if c.fingerprint != "" && c.fingerprint == b.fingerprint {
			ps = append(ps, Problem{c.file, "-", "the candidate equals bots/" + slug + ".json; the canary was promoted: remove it and its entry in tenant.json"})
		}
		c.percent = s.Canary.Percent
		b.canary = &c
	}
	files, _ := filepath.Glob(filepath.Join(dir, "canary", "*.json"))
	for _, f := range files {
		slug := strings.TrimSuffix(filepath.Base(f), ".json")
		if settings[slug].Canary == nil {
			ps = append(ps, Problem{f, "-", fmt.Sprintf("a candidate no canary names; add \"bots\": {%q: {\"canary\": {\"percent\": N}}} to tenant.json", slug)})
		}
	}
	return ps
}

// readCanary reads and checks a candidate config like a bot's.
func readCanary(path string, opts botconfig.Options) (canarySpec, []Problem) {
	c := canarySpec{file: path}
	if _, err := os.Stat(path); err != nil {
		return c, []Problem{{path, "-", "the canary's candidate config is missing"}}
	}
	res := CheckBotFile(path, opts, nil)
	ps := asFileProblems(path, res.Errors)
	c.warnings = asFileProblems(path, res.Warnings)
	if res.Bot != nil {
		raw, _ := os.ReadFile(path)
		c.config = compactJSON(raw)
		if bot, err := opts.LoadAndCompile(raw); err == nil {
			c.fingerprint = bot.Fingerprint
		}
	}
	return c, ps
}

// requireTests sets the bot's require_passing_tests when tenant.json
// names it and it differs. It runs before a publish, so the publish
// passes the gate the files ask for.
func (a *applier) requireTests(ctx context.Context, tenant string, b botSpec, cur bool) {
	if b.requireTests == nil || *b.requireTests == cur {
		return
	}
	on := *b.requireTests
	what := "publishes need passing tests"
	if !on {
		what = "publishes no longer need passing tests"
	}
	a.stats.Changed++
	if a.dryRun {
		fmt.Fprintf(a.out, "  bot %s: would change: %s\n", b.slug, what)
		return
	}
	if err := a.target.setRequireTests(ctx, tenant, b.slug, on); err != nil {
		a.stats.Changed--
		a.fail(b.file, err)
		return
	}
	fmt.Fprintf(a.out, "  bot %s: %s\n", b.slug, what)
}

// canary makes the bot's canary match its files: the candidate saved as
// a version taking its share of new dialogs. Without one in the files a
// running canary is left alone, or dropped with --prune.
func (a *applier) canary(ctx context.Context, tenant string, b botSpec, live liveBot) {
	c := b.canary
	if c == nil {
		if a.prune && live.canaryVersion > 0 {
			a.remove(b.file, "canary of bot "+b.slug, func() error { return a.target.dropCanary(ctx, tenant, b.slug) })
		}
		return
	}
	if live.canaryVersion > 0 && live.canaryFingerprint == c.fingerprint && live.canaryPercent == c.percent && sameJSON(live.canaryTests, b.tests) {
		fmt.Fprintf(a.out, "  bot %s: canary unchanged, version %d takes %d%% of new dialogs\n", b.slug, live.canaryVersion, c.percent)
		return
	}
	if a.dryRun {
		a.stats.Changed++
		fmt.Fprintf(a.out, "  bot %s: would send %d%% of new dialogs to %s\n", b.slug, c.percent, c.file)
		return
	}
	n, created, err := a.target.saveVersion(ctx, tenant, b.slug, c.config, b.tests)
	if err != nil {
		a.fail(c.file, err)
		return
	}
	if created {
		a.stats.VersionsCreated++
	}
	if err := a.target.setCanary(ctx, tenant, b.slug, n, c.percent); err != nil {
		a.fail(c.file, err)
		return
	}
	a.stats.Changed++
	fmt.Fprintf(a.out, "  bot %s: canary version %d takes %d%% of new dialogs\n", b.slug, n, c.percent)
}

func (d dbTarget) setRequireTests(ctx context.Context, tenant, slug string, on bool) error {
	_, err := d.svc.Tests().SetRequirePassing(ctx, d.op, tenant, slug, on)
	return err
}

func (d dbTarget) setCanary(ctx context.Context, tenant, slug string, version, percent int) error {
	_, err := d.svc.Versions().SetCanary(ctx, d.op, tenant, slug, version, percent)
	return err
}

func (d dbTarget) dropCanary(ctx context.Context, tenant, slug string) error {
	_, err := d.svc.Versions().DropCanary(ctx, d.op, tenant, slug)
	return err
}

// versionReader reads a bot's version n: what apply compares of it.
type versionReader func(n int) (fingerprint string, config, tests []byte, err error)

// readLiveBot completes lb, which has the bot's settings, with its live
// and canary versions read through get.
func readLiveBot(lb liveBot, get versionReader) (liveBot, error) {
	var err error
	if lb.published > 0 {
		if lb.fingerprint, lb.config, lb.tests, err = get(lb.published); err != nil {
			return lb, err
		}
	}
	if lb.canaryVersion > 0 {
		lb.canaryFingerprint, _, lb.canaryTests, err = get(lb.canaryVersion)
	}
	return lb, err
}

func (a apiTarget) setRequireTests(ctx context.Context, tenant, slug string, on bool) error {
	_, err := a.c.UpdateBot(ctx, tenant, slug, apiclient.UpdateBotRequest{RequirePassingTests: &on})
	return err
}

func (a apiTarget) setCanary(ctx context.Context, tenant, slug string, version, percent int) error {
	_, err := a.c.SetCanary(ctx, tenant, slug, version, percent)
	return err
}

func (a apiTarget) dropCanary(ctx context.Context, tenant, slug string) error {
	_, err := a.c.DropCanary(ctx, tenant, slug)
	return err
}
