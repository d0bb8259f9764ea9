package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/platform"
)

// tenantFile is tenants/<slug>/tenant.json.
type tenantFile struct {
	Name string `json:"name"`
	// Identity is how the tenant's signed end-user tokens are verified,
	// when they come from a JWKS URL; an HS256 secret is a secret and is
	// set through the API or admin UI, never from git.
	Identity *identityFile `json:"identity,omitempty"`
	// RetentionDays, when set, is the tenant's retention period: dialogs
	// are deleted that many days after their last activity (0: kept).
	RetentionDays *int `json:"retention_days,omitempty"`
}

// identityFile is tenant.json's identity: PUT /identity without a secret.
type identityFile struct {
	JWKSURL  string `json:"jwks_url"`
	Audience string `json:"audience,omitempty"`
}

// applyStats counts what one apply changed, for its closing line.
type applyStats struct {
	tenants, tenantsCreated, bots, botsCreated, versionsCreated, published, failed int
}

// apply creates or updates tenants and bots from a directory laid out like
// tenants/: `parley apply DIR`. It works on the database directly, as the
// operator. Applying the same directory twice changes nothing the second
// time: a version is saved only when a config compiles to a new
// fingerprint.
func (m *Main) apply(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("parley apply", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(m.Stderr, `usage: parley apply DIR

Creates or updates tenants and bots from DIR, laid out like tenants/:
  DIR/<tenant-slug>/tenant.json          {"name": "...", "retention_days"?: N, "identity"?: {...}}
  DIR/<tenant-slug>/bots/<bot-slug>.json an agent config
DIR may also be one tenant's directory. Missing tenants are created (their
first admin key is printed once); a bot gets a new version only when its
config changed, and its newest version is published. Every file is checked
first: when any has a problem, each is reported and nothing is applied.`)
	}
	pos, helped, err := parseArgs(fs, args, 1)
	if helped || err != nil {
		return err
	}
	dirs, err := tenantDirs(pos[0])
	if err != nil {
		return err
	}
	settings, err := LoadSettings(m.Getenv)
	if err != nil {
		return err
	}
	// Check every file before writing anything, so a typo in one bot
	// never leaves the database half applied.
	if problems := checkTenantDirs(dirs, configOptions(settings), m.Stderr); problems > 0 {
		fmt.Fprintf(m.Stderr, "%d file(s) have problems; nothing was applied.\n", problems)
		return exitError{code: 1}
	}
	d, err := m.openData(ctx, false)
	if err != nil {
		return err
	}
	defer d.Close()
	a := &applier{svc: d.platform, out: m.Stdout, errw: m.Stderr}
	for _, dir := range dirs {
		if err := ctx.Err(); err != nil {
			return err
		}
		a.tenant(ctx, dir)
	}
	s := a.stats
	fmt.Fprintf(m.Stdout, "Applied %d tenants and %d bots: %d tenants created, %d bots created, %d new versions, %d publishes.\n",
		s.tenants, s.bots, s.tenantsCreated, s.botsCreated, s.versionsCreated, s.published)
	if s.failed > 0 {
		fmt.Fprintf(m.Stderr, "%d item(s) failed; see above.\n", s.failed)
		return exitError{code: 1}
	}
	return nil
}

// tenantDirs lists the tenant directories under root, sorted; root itself
// when it holds a tenant.json.
func tenantDirs(root string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(root, "tenant.json")); err == nil {
		return []string{root}, nil
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", root, err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			if _, err := os.Stat(filepath.Join(root, e.Name(), "tenant.json")); err == nil {
				dirs = append(dirs, filepath.Join(root, e.Name()))
			}
		}
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%s holds no tenant directories (<slug>/tenant.json)", root)
	}
	sort.Strings(dirs)
	return dirs, nil
}

// checkTenantDirs validates every tenant file and bot config under dirs,
// printing each problem as FILE: POINTER: message, and returns how many
// files have problems.
func checkTenantDirs(dirs []string, opts botconfig.Options, w io.Writer) int {
	bad := 0
	for _, dir := range dirs {
		path := filepath.Join(dir, "tenant.json")
		var tf tenantFile
		if err := readStrictJSON(path, &tf); err != nil {
			fmt.Fprintf(w, "%s: %v\n", path, err)
			bad++
		}
		for _, f := range botFiles(dir) {
			res := validateFile(f, opts)
			for _, p := range res.Errors {
				fmt.Fprintf(w, "%s: %s: %s\n", f, displayPointer(p.Pointer), p.Message)
			}
			if !res.Valid {
				bad++
			}
		}
	}
	return bad
}

// botFiles lists a tenant directory's bot configs, sorted.
func botFiles(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "bots", "*.json"))
	sort.Strings(files)
	return files
}

// applier applies tenant directories one by one. Files were checked
// first; what can still fail here (the database, a slug clash) is reported
// and counted, and the rest still applies.
type applier struct {
	svc   *platform.Service
	out   io.Writer
	errw  io.Writer
	stats applyStats
}

func (a *applier) fail(path string, err error) {
	a.stats.failed++
	var pe *platform.Error
	if errors.As(err, &pe) && len(pe.Details) > 0 {
		for _, d := range pe.Details {
			fmt.Fprintf(a.errw, "%s: %s: %s\n", path, displayPointer(d.Pointer), d.Message)
		}
		return
	}
	fmt.Fprintf(a.errw, "%s: %v\n", path, err)
}

// tenant applies one tenant directory: the tenant, then its bots.
func (a *applier) tenant(ctx context.Context, dir string) {
	slug := filepath.Base(dir)
	path := filepath.Join(dir, "tenant.json")
	var tf tenantFile
	if err := readStrictJSON(path, &tf); err != nil {
		a.fail(path, err)
		return
	}
	a.stats.tenants++
	op := platform.Operator()
	current, err := a.svc.GetTenant(ctx, op, slug)
	switch {
	case platform.ErrorCode(err) == platform.CodeNotFound:
		t, key, err := a.svc.CreateTenant(ctx, op, platform.CreateTenantInput{Slug: slug, Name: tf.Name})
		if err != nil {
			a.fail(path, err)
			return
		}
		a.stats.tenantsCreated++
		current = t
		fmt.Fprintf(a.out, "tenant %s: created (%s)\n  admin API key (shown this once; store it now): %s\n", slug, t.ID, key.Key)
	case err != nil:
		a.fail(path, err)
		return
	default:
		fmt.Fprintf(a.out, "tenant %s: exists\n", slug)
	}
	if tf.RetentionDays != nil && *tf.RetentionDays != current.RetentionDays {
		if _, err := a.svc.UpdateTenant(ctx, op, slug, platform.UpdateTenantInput{RetentionDays: tf.RetentionDays}); err != nil {
			a.fail(path, err)
			return
		}
		fmt.Fprintf(a.out, "  retention: dialogs deleted %d days after their last activity (0: kept)\n", *tf.RetentionDays)
	}
	if tf.Identity != nil {
		a.identity(ctx, slug, path, *tf.Identity)
	}
	for _, f := range botFiles(dir) {
		a.bot(ctx, slug, f)
	}
}

// identity sets the tenant's JWKS identity settings unless they are so
// already.
func (a *applier) identity(ctx context.Context, tenant, path string, want identityFile) {
	op := platform.Operator()
	if got, err := a.svc.GetIdentity(ctx, op, tenant); err == nil && !got.HasSecret && got.JWKSURL == want.JWKSURL && got.Audience == want.Audience {
		fmt.Fprintf(a.out, "  identity: unchanged\n")
		return
	}
	if _, err := a.svc.PutIdentity(ctx, op, tenant, platform.IdentityInput{JWKSURL: want.JWKSURL, Audience: want.Audience}); err != nil {
		a.fail(path, err)
		return
	}
	fmt.Fprintf(a.out, "  identity: user tokens verified with the keys at %s\n", want.JWKSURL)
}

// bot creates the bot or saves its config as a new version when it
// changed, then publishes the newest version unless it is live already.
func (a *applier) bot(ctx context.Context, tenant, path string) {
	slug := strings.TrimSuffix(filepath.Base(path), ".json")
	config, err := os.ReadFile(path)
	if err != nil {
		a.fail(path, err)
		return
	}
	a.stats.bots++
	op := platform.Operator()
	b, err := a.svc.GetBot(ctx, op, tenant, slug)
	if platform.ErrorCode(err) == platform.CodeNotFound {
		b, v, err := a.svc.CreateBot(ctx, op, tenant, slug, config)
		if err != nil {
			a.fail(path, err)
			return
		}
		a.stats.botsCreated++
		a.stats.versionsCreated++
		a.publish(ctx, tenant, path, b, v.Number, "created")
		return
	}
	if err != nil {
		a.fail(path, err)
		return
	}
	v, created, err := a.svc.CreateVersion(ctx, op, tenant, slug, config)
	if err != nil {
		a.fail(path, err)
		return
	}
	what := "unchanged"
	if created {
		a.stats.versionsCreated++
		what = fmt.Sprintf("version %d saved", v.Number)
	}
	a.publish(ctx, tenant, path, b, v.Number, what)
}

func (a *applier) publish(ctx context.Context, tenant, path string, b platform.Bot, n int, what string) {
	if b.PublishedVersion == n {
		fmt.Fprintf(a.out, "  bot %s: %s, version %d live\n", b.Slug, what, n)
		return
	}
	if _, err := a.svc.Publish(ctx, platform.Operator(), tenant, b.Slug, n); err != nil {
		a.fail(path, err)
		return
	}
	a.stats.published++
	fmt.Fprintf(a.out, "  bot %s: %s, version %d published\n", b.Slug, what, n)
}

// readStrictJSON decodes one JSON object from path; unknown fields are
// errors, as everywhere else in Parley's config files.
func readStrictJSON(path string, dst any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("not a valid tenant file: %w", err)
	}
	return nil
}
