package main

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
}

// identityFile is tenant.json's identity: PUT /identity without a secret.
type identityFile struct {
	JWKSURL  string `json:"jwks_url"`
	Audience string `json:"audience,omitempty"`
}

// tenantSpec is one checked tenant directory.
type tenantSpec struct {
	file, slug, name string
	secrets          []secretSpec
	identity         *identityFile
	retentionDays    *int
	bots             []botSpec
	channels         []channelSpec
}

func (t tenantSpec) hasBot(slug string) bool {
	for _, b := range t.bots {
		if b.slug == slug {
			return true
		}
	}
	return false
}

func (t tenantSpec) hasSecret(name string) bool {
	for _, s := range t.secrets {
		if s.name == name {
			return true
		}
	}
	return false
}

type secretSpec struct{ name, env, value string }

// botSpec is one checked bot: its config and tests, compacted so the
// database and the API store the same text.
type botSpec struct {
	file, slug    string
	config, tests []byte
	fingerprint   string
}

// fileProblem is one problem with one file.
type fileProblem struct{ file, pointer, message string }

func (p fileProblem) String() string {
	if p.pointer == "-" {
		return p.file + ": " + p.message
	}
	return fmt.Sprintf("%s: %s: %s", p.file, displayPointer(p.pointer), p.message)
}

// readTenantDirs reads and checks every file under root: tenant files, slugs,
// bot configs, test files and the environment variables secrets name. It
// returns every problem at once.
func readTenantDirs(root string, getenv func(string) string, opts botconfig.Options) ([]tenantSpec, []fileProblem) {
	dirs, err := tenantDirs(root)
	if err != nil {
		return nil, []fileProblem{{root, "-", err.Error()}}
	}
	var specs []tenantSpec
	var problems []fileProblem
	for _, dir := range dirs {
		t, ps := readTenantDir(dir, getenv, opts)
		specs = append(specs, t)
		problems = append(problems, ps...)
	}
	return specs, problems
}

func readTenantDir(dir string, getenv func(string) string, opts botconfig.Options) (tenantSpec, []fileProblem) {
	t := tenantSpec{file: filepath.Join(dir, "tenant.json"), slug: filepath.Base(dir)}
	var ps []fileProblem
	if !platform.ValidSlug(t.slug) {
		ps = append(ps, fileProblem{dir, "-", "the directory name is the tenant's slug: 1-63 lowercase letters, digits or hyphens"})
	}
	var tf tenantFile
	if err := readStrictJSON(t.file, &tf); err != nil {
		ps = append(ps, fileProblem{t.file, "-", err.Error()})
	}
	t.name, t.identity, t.retentionDays = tf.Name, tf.Identity, tf.RetentionDays
	for _, name := range sortedKeys(tf.Secrets) {
		env := tf.Secrets[name]
		ptr := "/secrets/" + name
		switch {
		case !platform.ValidSecretName(name):
			ps = append(ps, fileProblem{t.file, ptr, "a secret name is letters, digits and _, not starting with a digit"})
		case env == "":
			ps = append(ps, fileProblem{t.file, ptr, "name the environment variable that holds the value"})
		case getenv(env) == "":
			ps = append(ps, fileProblem{t.file, ptr, fmt.Sprintf("environment variable %s is not set", env)})
		default:
			t.secrets = append(t.secrets, secretSpec{name: name, env: env, value: getenv(env)})
		}
	}
	bots := map[string]bool{}
	for _, f := range botFiles(dir) {
		b, bps := readBot(f, opts)
		ps = append(ps, bps...)
		bots[b.slug] = true
		t.bots = append(t.bots, b)
	}
	channels, cps := readChannels(dir, getenv)
	t.channels = channels
	ps = append(ps, cps...)
	tests, _ := filepath.Glob(filepath.Join(dir, "tests", "*.json"))
	for _, f := range tests {
		if !bots[strings.TrimSuffix(filepath.Base(f), ".json")] {
			ps = append(ps, fileProblem{f, "-", "tests for a bot the directory does not have (want bots/" + filepath.Base(f) + ")"})
		}
	}
	return t, ps
}

// readBot reads bots/<slug>.json and, when present, tests/<slug>.json.
func readBot(path string, opts botconfig.Options) (botSpec, []fileProblem) {
	b := botSpec{file: path, slug: strings.TrimSuffix(filepath.Base(path), ".json")}
	var ps []fileProblem
	if !platform.ValidSlug(b.slug) {
		ps = append(ps, fileProblem{path, "-", "the file name is the bot's slug: 1-63 lowercase letters, digits or hyphens"})
	}
	res := validateFile(path, opts)
	for _, p := range res.Errors {
		ps = append(ps, fileProblem{path, p.Pointer, p.Message})
	}
	if res.Valid {
		raw, _ := os.ReadFile(path)
		b.config = compactJSON(raw)
		if bot, err := opts.LoadAndCompile(raw); err == nil {
			b.fingerprint = bot.Fingerprint
		}
	}
	testsPath := filepath.Join(filepath.Dir(filepath.Dir(path)), "tests", filepath.Base(path))
	raw, err := os.ReadFile(testsPath)
	switch {
	case os.IsNotExist(err):
	case err != nil:
		ps = append(ps, fileProblem{testsPath, "-", err.Error()})
	default:
		if _, err := bottest.Parse(raw); err != nil {
			for _, p := range asProblems(err) {
				ps = append(ps, fileProblem{testsPath, p.Pointer, p.Message})
			}
		} else {
			b.tests = compactJSON(raw)
		}
	}
	return b, ps
}

func asProblems(err error) botconfig.Problems {
	if ps, ok := err.(botconfig.Problems); ok {
		return ps
	}
	return botconfig.Problems{{Message: err.Error()}}
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
