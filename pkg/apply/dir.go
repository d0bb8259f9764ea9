package apply

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/bottest"
	"github.com/parleyhq/parley/pkg/platform"
)

// tenantFile is tenants/<slug>/tenant.json.
type tenantFile struct {
	Name string `json:"name"`
	// Secrets maps each tenant secret to the environment variable that
	// holds its value: values never live in files under version control.
	Secrets map[string]string `json:"secrets,omitempty"`
	// Identity is how the tenant's signed end-user tokens are verified,
	// when they come from a JWKS URL; an HS256 secret is a secret and is
	// set through the API or admin UI, never from git.
	Identity *identityFile `json:"identity,omitempty"`
	// RetentionDays, when set, is the tenant's retention period: dialogs
	// are deleted that many days after their last activity (0: kept).
	RetentionDays *int `json:"retention_days,omitempty"`
	// IdleMinutes, when set, is how long a dialog stays quiet before its
	// outcome is computed (docs/insights.md; 0: only at close).
	IdleMinutes *int `json:"idle_minutes,omitempty"`
	// SSO is the tenant's own OpenID Connect provider (docs/sso.md); its
	// client secret comes from an environment variable, never the file.
	SSO *ssoFile `json:"sso,omitempty"`
	// RequireTwoFactor, when set, asks members who sign in with a
	// password for a second factor.
	RequireTwoFactor *bool `json:"require_two_factor,omitempty"`
	// Bots holds each bot's release settings (require_passing_tests, a
	// canary), by slug.
	Bots map[string]botSettingsFile `json:"bots,omitempty"`
}

// identityFile is tenant.json's identity: PUT /identity without a secret.
type identityFile struct {
	JWKSURL  string `json:"jwks_url"`
	Audience string `json:"audience,omitempty"`
}

// Tenant is one checked tenant directory.
type Tenant struct {
	file, slug, name string
	secrets          []secretSpec
	identity         *identityFile
	retentionDays    *int
	idleMinutes      *int
	sso              *ssoSpec
	requireTwoFactor *bool
	bots             []botSpec
	channels         []channelSpec
	providers        []providerSpec
	webhooks         []webhookSpec
	// warnings do not stop the apply: models a provider's list lacks.
	Warnings []Problem
	// members is members.json, nil when the directory has none (then
	// apply leaves the tenant's members alone, even with --prune).
	members *membersFile
	// knowledge is the knowledge/ directory, nil when there is none.
	knowledge *knowledgeSpec
}

func (t Tenant) hasBot(slug string) bool { return t.botIndex(slug) >= 0 }

// botIndex is the index of the bot slug in t.bots, -1 when it has none.
func (t Tenant) botIndex(slug string) int {
	return slices.IndexFunc(t.bots, func(b botSpec) bool { return b.slug == slug })
}

// namesSecret reports whether tenant.json sets the secret name.
func (t Tenant) namesSecret(name string) bool {
	return slices.ContainsFunc(t.secrets, func(s secretSpec) bool { return s.name == name })
}

// hasSecret reports whether the directory sets the secret name: in
// tenant.json, or as a provider's API key.
func (t Tenant) hasSecret(name string) bool {
	return t.namesSecret(name) || slices.ContainsFunc(t.providers, func(p providerSpec) bool { return p.keySecret() == name })
}

type secretSpec struct{ name, env, value string }

// botSpec is one checked bot: its config and tests, compacted so the
// database and the API store the same text, and its release settings
// from tenant.json.
type botSpec struct {
	file, slug    string
	config, tests []byte
	fingerprint   string
	// requireTests is nil when tenant.json does not say.
	requireTests *bool
	canary       *canarySpec
	// agents are the slugs the config calls as agents.
	agents []string
}

// Problem is one problem with one file of a tenant directory; Pointer is
// the JSON pointer in the file, "-" when the problem is the whole file.
type Problem struct{ File, Pointer, Message string }

// problemList gathers one file's problems.
type problemList struct {
	file string
	ps   []Problem
}

func (l *problemList) add(pointer, format string, args ...any) {
	l.ps = append(l.ps, Problem{l.file, pointer, fmt.Sprintf(format, args...)})
}

// readKeyedFile reads a tenant directory's optional file of named entries
// (providers.json, webhooks.json): nil and no problem when it is absent.
func readKeyedFile[T any](path string) (map[string]T, *problemList) {
	l := &problemList{file: path}
	var entries map[string]T
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil, l
	}
	if err := readStrictJSON(path, &entries); err != nil {
		l.ps = append(l.ps, Problem{path, "-", err.Error()})
	}
	return entries, l
}

// String is "FILE: POINTER: message", or "FILE: message" for the whole file.
func (p Problem) String() string {
	if p.Pointer == "-" {
		return p.File + ": " + p.Message
	}
	return fmt.Sprintf("%s: %s: %s", p.File, botconfig.DisplayPointer(p.Pointer), p.Message)
}

// ReadDir reads and checks every file under root: tenant files, slugs,
// bot configs, test files and the environment variables secrets name. It
// returns every problem at once.
func ReadDir(root string, getenv func(string) string, opts botconfig.Options) ([]Tenant, []Problem) {
	dirs, err := TenantDirs(root)
	if err != nil {
		return nil, []Problem{{root, "-", err.Error()}}
	}
	var specs []Tenant
	var problems []Problem
	for _, dir := range dirs {
		t, ps := readTenantDir(dir, getenv, opts)
		specs = append(specs, t)
		problems = append(problems, ps...)
	}
	return specs, problems
}

func readTenantDir(dir string, getenv func(string) string, opts botconfig.Options) (Tenant, []Problem) {
	t := Tenant{file: filepath.Join(dir, "tenant.json"), slug: filepath.Base(dir)}
	var ps []Problem
	if !platform.ValidSlug(t.slug) {
		ps = append(ps, Problem{dir, "-", "the directory name is the tenant's slug: 1-63 lowercase letters, digits or hyphens"})
	}
	var tf tenantFile
	if err := readStrictJSON(t.file, &tf); err != nil {
		ps = append(ps, Problem{t.file, "-", err.Error()})
	}
	t.name, t.identity, t.retentionDays, t.idleMinutes = tf.Name, tf.Identity, tf.RetentionDays, tf.IdleMinutes
	t.requireTwoFactor = tf.RequireTwoFactor
	t.sso, ps = readSSO(t.file, tf.SSO, getenv, ps)
	for _, name := range sortedKeys(tf.Secrets) {
		env := tf.Secrets[name]
		ptr := "/secrets/" + name
		switch {
		case !platform.ValidSecretName(name):
			ps = append(ps, Problem{t.file, ptr, "a secret name is letters, digits and _, not starting with a digit"})
		case env == "":
			ps = append(ps, Problem{t.file, ptr, "name the environment variable that holds the value"})
		case getenv(env) == "":
			ps = append(ps, Problem{t.file, ptr, fmt.Sprintf("environment variable %s is not set", env)})
		default:
			t.secrets = append(t.secrets, secretSpec{name: name, env: env, value: getenv(env)})
		}
	}
	bots := map[string]bool{}
	for _, f := range botFiles(dir) {
		b, bps, warnings := readBot(f, opts)
		ps = append(ps, bps...)
		t.Warnings = append(t.Warnings, warnings...)
		bots[b.slug] = true
		t.bots = append(t.bots, b)
	}
	t.bots = agentsFirst(t.bots)
	channels, cps := readChannels(dir, getenv)
	t.channels = channels
	ps = append(ps, cps...)
	t.members, ps = readMembers(dir, ps)
	tests, _ := filepath.Glob(filepath.Join(dir, "tests", "*.json"))
	for _, f := range tests {
		if !bots[strings.TrimSuffix(filepath.Base(f), ".json")] {
			ps = append(ps, Problem{f, "-", "tests for a bot the directory does not have (want bots/" + filepath.Base(f) + ")"})
		}
	}
	ps = append(ps, readBotSettings(dir, t.file, tf.Bots, &t, opts)...)
	var more []Problem
	t.providers, more = readProviders(dir, getenv, t.namesSecret)
	ps = append(ps, more...)
	t.webhooks, more = readWebhooks(dir, getenv, bots)
	ps = append(ps, more...)
	t.knowledge, more = readKnowledge(dir)
	ps = append(ps, more...)
	return t, ps
}

// readBot reads bots/<slug>.json and, when present, tests/<slug>.json.
func readBot(path string, opts botconfig.Options) (botSpec, []Problem, []Problem) {
	b := botSpec{file: path, slug: strings.TrimSuffix(filepath.Base(path), ".json")}
	var ps []Problem
	if !platform.ValidSlug(b.slug) {
		ps = append(ps, Problem{path, "-", "the file name is the bot's slug: 1-63 lowercase letters, digits or hyphens"})
	}
	res := CheckBotFile(path, opts, nil)
	for _, p := range res.Errors {
		ps = append(ps, Problem{path, p.Pointer, p.Message})
	}
	warnings := asFileProblems(path, res.Warnings)
	if res.Bot != nil {
		raw, _ := os.ReadFile(path)
		b.config = compactJSON(raw)
		if bot, err := opts.LoadAndCompile(raw); err == nil {
			b.fingerprint = bot.Fingerprint
			for _, a := range bot.Agents {
				b.agents = append(b.agents, a.Bot)
			}
		}
	}
	testsPath := filepath.Join(filepath.Dir(filepath.Dir(path)), "tests", filepath.Base(path))
	raw, err := os.ReadFile(testsPath)
	switch {
	case os.IsNotExist(err):
	case err != nil:
		ps = append(ps, Problem{testsPath, "-", err.Error()})
	default:
		if _, err := bottest.Parse(raw); err != nil {
			for _, p := range asProblems(err) {
				ps = append(ps, Problem{testsPath, p.Pointer, p.Message})
			}
		} else {
			b.tests = compactJSON(raw)
		}
	}
	return b, ps, warnings
}

func asFileProblems(file string, ps botconfig.Problems) []Problem {
	var out []Problem
	for _, p := range ps {
		out = append(out, Problem{file, p.Pointer, p.Message})
	}
	return out
}

func asProblems(err error) botconfig.Problems {
	if ps, ok := err.(botconfig.Problems); ok {
		return ps
	}
	return botconfig.Problems{{Message: err.Error()}}
}

// TenantDirs lists the tenant directories under root, sorted; root itself
// when it holds a tenant.json.
func TenantDirs(root string) ([]string, error) {
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

// botFiles lists a tenant directory's bot configs, sorted.
func botFiles(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "bots", "*.json"))
	sort.Strings(files)
	return files
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

// compactJSON is raw as encoding/json writes it (compact, HTML-escaped),
// which is also what reaches the server through the API client, so both
// targets store the same text; nil stays nil.
func compactJSON(raw []byte) []byte {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	b, err := json.Marshal(json.RawMessage(raw))
	if err != nil {
		return raw
	}
	return b
}

// sameJSON compares two JSON texts ignoring whitespace; empty equals nil.
func sameJSON(a, b []byte) bool {
	return bytes.Equal(compactJSON(a), compactJSON(b))
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// agentsFirst orders bots so each comes after the bots of the directory it
// calls as agents (saving a version checks they exist), keeping file order
// otherwise. Bots in a cycle keep file order: the first one's save then
// names the others as unknown, which is the cycle's fault.
func agentsFirst(bots []botSpec) []botSpec {
	index := map[string]int{}
	for i, b := range bots {
		index[b.slug] = i
	}
	out := make([]botSpec, 0, len(bots))
	state := make([]int, len(bots)) // 0 new, 1 visiting, 2 placed
	var place func(i int)
	place = func(i int) {
		if state[i] != 0 {
			return
		}
		state[i] = 1
		for _, a := range bots[i].agents {
			if j, ok := index[a]; ok {
				place(j)
			}
		}
		state[i] = 2
		out = append(out, bots[i])
	}
	for i := range bots {
		place(i)
	}
	return out
}
