package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/platform"
)

// gitopsDir is the example tenants with a secret named in acme-outdoor's
// tenant file; its value comes from ACME_CRM_TOKEN.
func gitopsDir(t *testing.T) string {
	t.Helper()
	dir := copyTree(t, "../../tenants")
	writeFile(t, filepath.Join(dir, "acme-outdoor", "tenant.json"), `{"name": "Acme Outdoor", "secrets": {"crm_token": "ACME_CRM_TOKEN"}}`)
	return dir
}

// releaseFiles are the files beside the bots that apply also makes true:
// acme-outdoor's providers and webhooks, and support's release settings
// (passing tests required, a canary of an edited config).
func releaseFiles(t *testing.T, dir string) {
	t.Helper()
	acme := filepath.Join(dir, "acme-outdoor")
	writeFile(t, filepath.Join(acme, "tenant.json"), `{"name": "Acme Outdoor", "secrets": {"crm_token": "ACME_CRM_TOKEN"},
 "bots": {"support": {"require_passing_tests": true, "canary": {"percent": 10}}}}`)
	cfg, err := os.ReadFile(filepath.Join(acme, "bots", "support.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(acme, "canary", "support.json"), string(withGreeting(t, cfg, "Candidate greeting")))
	writeFile(t, filepath.Join(acme, "providers.json"), `{
 "claude": {"kind": "anthropic", "api_key_env": "ACME_ANTHROPIC_KEY", "models": ["claude-sonnet-4-5"]},
 "local": {"kind": "openai", "base_url": "https://llm.acme.example/v1/", "headers": {"X-Team": "support"}}}`)
	writeFile(t, filepath.Join(acme, "webhooks.json"), `{
 "crm": {"url": "http://127.0.0.1:9/crm", "description": "Acme's CRM", "events": ["dialog.created", "tool.failed"], "bot": "support", "secret_env": "ACME_CRM_WEBHOOK_SECRET"},
 "audit": {"url": "http://127.0.0.1:9/audit", "events": ["*"], "enabled": false}}`)
}

// releaseEnv is what releaseFiles's environment variables and webhook
// URLs need.
func releaseEnv(env parleyEnv) parleyEnv {
	env["ACME_CRM_TOKEN"] = "crm-secret-value"
	env["ACME_ANTHROPIC_KEY"] = "sk-ant-test-key"
	env["ACME_CRM_WEBHOOK_SECRET"] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	env["PARLEY_OUTBOUND_ALLOW"] = "127.0.0.1/32"
	env["PARLEY_OUTBOUND_PORTS"] = "9"
	return env
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// botState is what apply decides about one bot, as both targets see it.
type botState struct {
	Published   int
	Versions    int
	Fingerprint string
	Config      string
	Tests       string
	botSettings
}

type tenantState struct {
	Secrets   []string
	Bots      map[string]botState
	Providers map[string]providerState
	Webhooks  map[string]webhookState
}

// botSettings is a bot's release settings as both targets see them.
type botSettings struct {
	RequireTests      bool
	CanaryVersion     int
	CanaryPercent     int
	CanaryFingerprint string
}

type providerState struct {
	Kind, BaseURL, APIKeySecret string
	Headers                     map[string]string
}

type webhookState struct {
	URL         string
	Description string
	Events      []string
	Bot         string // the slug
	Enabled     bool
}

// snapshot reads the state of the given tenants through target.
func snapshot(t *testing.T, target applyTarget, versions func(tenant, bot string) int, tenants ...string) map[string]tenantState {
	t.Helper()
	ctx := context.Background()
	out := map[string]tenantState{}
	for _, slug := range tenants {
		secrets, err := target.secretNames(ctx, slug)
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(secrets)
		live, err := target.liveBots(ctx, slug)
		if err != nil {
			t.Fatal(err)
		}
		ts := tenantState{Secrets: secrets, Bots: map[string]botState{}, Providers: map[string]providerState{}, Webhooks: map[string]webhookState{}}
		slugOf := map[string]string{}
		for bot, lb := range live {
			slugOf[lb.id] = bot
			ts.Bots[bot] = botState{Published: lb.published, Versions: versions(slug, bot), Fingerprint: lb.fingerprint,
				Config: string(compactJSON(lb.config)), Tests: string(compactJSON(lb.tests)),
				botSettings: botSettings{RequireTests: lb.requireTests, CanaryVersion: lb.canaryVersion,
					CanaryPercent: lb.canaryPercent, CanaryFingerprint: lb.canaryFingerprint}}
		}
		providers, err := target.providers(ctx, slug)
		if err != nil {
			t.Fatal(err)
		}
		for name, p := range providers {
			ts.Providers[name] = providerState{Kind: p.kind, BaseURL: p.baseURL, APIKeySecret: p.apiKeySecret, Headers: p.headers}
		}
		hooks, err := target.webhooks(ctx, slug)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range hooks {
			ts.Webhooks[w.name] = webhookState{URL: w.url, Description: w.description, Events: w.events, Bot: slugOf[w.botID], Enabled: w.enabled}
		}
		out[slug] = ts
	}
	return out
}

// applyBothWays applies dir to the database of dbEnv and through the
// server at url, and returns both outputs.
func applyBothWays(t *testing.T, dbEnv, srvEnv parleyEnv, url, dir string, extra ...string) (string, string) {
	t.Helper()
	code, dbOut, stderr := runParley(t, dbEnv, append(append([]string{"apply"}, extra...), dir)...)
	if code != 0 {
		t.Fatalf("apply to the database: exit %d\n%s%s", code, dbOut, stderr)
	}
	code, srvOut, stderr := runParley(t, srvEnv, append(append([]string{"apply", "--server", url, "--key", e2eToken}, extra...), dir)...)
	if code != 0 {
		t.Fatalf("apply --server: exit %d\n%s%s", code, srvOut, stderr)
	}
	return dbOut, srvOut
}

func TestApplyThroughTheServerAndToTheDatabaseLeaveTheSameState(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, dbEnv parleyEnv) {
		dir := gitopsDir(t)
		releaseFiles(t, dir)
		releaseEnv(dbEnv)
		srvEnv := releaseEnv(parleyEnv{"PARLEY_DATA_DIR": t.TempDir(), "PARLEY_PLATFORM_TOKEN": e2eToken})
		srv := startParley(t, srvEnv)
		applyBoth := func(t *testing.T, extra ...string) (string, string) {
			t.Helper()
			return applyBothWays(t, dbEnv, srvEnv, srv.URL, dir, extra...)
		}
		compare := func(t *testing.T) map[string]tenantState {
			t.Helper()
			d, err := (&Main{Stderr: os.Stderr, Getenv: dbEnv.getenv}).openData(context.Background(), false)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			ctx := context.Background()
			db := snapshot(t, dbTarget{svc: d.platform, op: platform.Operator()}, func(tenant, bot string) int {
				vs, _, err := d.platform.ListVersions(ctx, platform.Operator(), tenant, bot, platform.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return len(vs)
			}, "acme-outdoor", "harbor-physio")
			api := apiTarget{c: srv.client(e2eToken)}
			viaServer := snapshot(t, api, func(tenant, bot string) int {
				n, err := api.latestVersion(ctx, tenant, bot)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}, "acme-outdoor", "harbor-physio")
			if !reflect.DeepEqual(db, viaServer) {
				t.Fatalf("the database holds\n%+v\nthe server holds\n%+v", db, viaServer)
			}
			return db
		}

		dbOut, srvOut := applyBoth(t)
		if dbOut == "" || srvOut == "" {
			t.Fatal("no output")
		}
		state := compare(t)
		acme := state["acme-outdoor"]
		support := acme.Bots["support"]
		if support.Published != 1 || support.Tests == "" || !reflect.DeepEqual(acme.Secrets, []string{"crm_token", "provider_claude_api_key"}) {
			t.Fatalf("after the first apply: %+v", acme)
		}
		t.Run("the release settings, providers and webhooks are applied", func(t *testing.T) {
			if !support.RequireTests || support.CanaryVersion != 2 || support.CanaryPercent != 10 || support.CanaryFingerprint == support.Fingerprint {
				t.Errorf("support's release settings: %+v", support.botSettings)
			}
			wantProviders := map[string]providerState{
				"claude": {Kind: "anthropic", BaseURL: "https://api.anthropic.com", APIKeySecret: "provider_claude_api_key"},
				"local":  {Kind: "openai", BaseURL: "https://llm.acme.example/v1", Headers: map[string]string{"X-Team": "support"}},
			}
			if !reflect.DeepEqual(acme.Providers, wantProviders) {
				t.Errorf("providers: %+v", acme.Providers)
			}
			wantHooks := map[string]webhookState{
				"crm":   {URL: "http://127.0.0.1:9/crm", Description: "Acme's CRM", Events: []string{"dialog.created", "tool.failed"}, Bot: "support", Enabled: true},
				"audit": {URL: "http://127.0.0.1:9/audit", Events: []string{"*"}, Enabled: false},
			}
			if !reflect.DeepEqual(acme.Webhooks, wantHooks) {
				t.Errorf("webhooks: %+v", acme.Webhooks)
			}
			for _, out := range []string{dbOut, srvOut} {
				if !strings.Contains(out, "webhook crm: created, signing with the secret in $ACME_CRM_WEBHOOK_SECRET") ||
					!regexp.MustCompile(`webhook audit: created\n    signing secret \(shown this once; give it to the receiver now\): whsec_\S+\n`).MatchString(out) {
					t.Errorf("the webhooks' secrets are not accounted for:\n%s", out)
				}
				if strings.Contains(out, "ACME_CRM_WEBHOOK_SECRET") && strings.Contains(out, dbEnv["ACME_CRM_WEBHOOK_SECRET"]) {
					t.Errorf("a secret from the environment is printed:\n%s", out)
				}
			}
		})

		t.Run("a second apply changes nothing on either", func(t *testing.T) {
			dbOut, srvOut := applyBoth(t)
			for _, out := range []string{dbOut, srvOut} {
				if !strings.Contains(out, "0 tenants created, 0 bots created, 0 new versions, 0 publishes") ||
					!strings.Contains(out, "0 providers, webhooks and settings changed") {
					t.Errorf("second apply changed something:\n%s", out)
				}
			}
			compare(t)
		})

		t.Run("an edit, a new test and removed bots with --prune apply alike", func(t *testing.T) {
			cfg, _ := os.ReadFile(filepath.Join(dir, "acme-outdoor", "bots", "support.json"))
			writeFile(t, filepath.Join(dir, "acme-outdoor", "bots", "support.json"), string(withGreeting(t, cfg, "Edited greeting")))
			tests, _ := os.ReadFile(filepath.Join(dir, "harbor-physio", "tests", "booking.json"))
			writeFile(t, filepath.Join(dir, "harbor-physio", "tests", "booking.json"), strings.Replace(string(tests), "a first visit is booked", "a first visit gets booked", 1))
			os.Remove(filepath.Join(dir, "acme-outdoor", "bots", "gear-guide.json"))
			os.Remove(filepath.Join(dir, "acme-outdoor", "tests", "gear-guide.json"))
			// trip-planner calls gear-guide as an agent: it goes too, first.
			os.Remove(filepath.Join(dir, "acme-outdoor", "bots", "trip-planner.json"))
			os.Remove(filepath.Join(dir, "acme-outdoor", "tests", "trip-planner.json"))
			writeFile(t, filepath.Join(dir, "acme-outdoor", "providers.json"), `{"claude": {"kind": "anthropic", "api_key_env": "ACME_ANTHROPIC_KEY"}}`)
			writeFile(t, filepath.Join(dir, "acme-outdoor", "webhooks.json"), `{
 "crm": {"url": "http://127.0.0.1:9/crm-v2", "events": ["dialog.created"], "secret_env": "ACME_CRM_WEBHOOK_SECRET"}}`)
			dbOut, srvOut := applyBoth(t, "--prune")
			for _, out := range []string{dbOut, srvOut} {
				for _, want := range []string{"bot support: version 3 saved, version 3 published", "bot booking: version 2 saved, version 2 published",
					"bot trip-planner: not in the directory; deleted\n  bot gear-guide: not in the directory; deleted", "provider local: not in the directory; deleted",
					"webhook crm: changed bot, description, events, url", "webhook audit: not in the directory; deleted", "bot support: canary unchanged, version 2 takes 10%"} {
					if !strings.Contains(out, want) {
						t.Errorf("output lacks %q:\n%s", want, out)
					}
				}
			}
			state := compare(t)
			for _, bot := range []string{"gear-guide", "trip-planner"} {
				if _, ok := state["acme-outdoor"].Bots[bot]; ok {
					t.Errorf("%s survived --prune", bot)
				}
			}
			if !strings.Contains(state["acme-outdoor"].Bots["support"].Config, "Edited greeting") {
				t.Errorf("support's live config = %s", state["acme-outdoor"].Bots["support"].Config)
			}
			if _, ok := state["acme-outdoor"].Providers["local"]; ok || len(state["acme-outdoor"].Webhooks) != 1 ||
				state["acme-outdoor"].Webhooks["crm"].URL != "http://127.0.0.1:9/crm-v2" {
				t.Errorf("providers and webhooks after --prune: %+v %+v", state["acme-outdoor"].Providers, state["acme-outdoor"].Webhooks)
			}
		})
	})
}

func TestApplyComparesWithTheLiveVersion(t *testing.T) {
	env := parleyEnv{"PARLEY_DATA_DIR": t.TempDir(), "ACME_CRM_TOKEN": "v"}
	dir := gitopsDir(t)
	if code, out, stderr := runParley(t, env, "apply", dir); code != 0 {
		t.Fatalf("apply: %d %s%s", code, out, stderr)
	}
	d, err := (&Main{Stderr: os.Stderr, Getenv: env.getenv}).openData(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, op := context.Background(), platform.Operator()
	// Someone saves and publishes version 2 by hand: the files no longer
	// match what is live. Its greeting's &, < and > are shown as written.
	cfg, _ := os.ReadFile(filepath.Join(dir, "acme-outdoor", "bots", "support.json"))
	if _, _, err := d.platform.CreateVersion(ctx, op, "acme-outdoor", "support", withGreeting(t, cfg, "Hand-made & <fresh>")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.platform.Publish(ctx, op, "acme-outdoor", "support", 2); err != nil {
		t.Fatal(err)
	}
	d.Close()

	code, out, _ := runParley(t, env, "apply", "--dry-run", dir)
	if code != 0 || !strings.Contains(out, "bot support: differs from live version 2") ||
		!strings.Contains(out, `-    "greeting": "Hand-made & <fresh>"`) || !strings.Contains(out, "+++ "+filepath.Join(dir, "acme-outdoor", "bots", "support.json")) {
		t.Fatalf("dry run: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "bot booking: unchanged, version 1 live") || !strings.Contains(out, "secret crm_token: would be set from $ACME_CRM_TOKEN") {
		t.Errorf("dry run:\n%s", out)
	}

	code, out, _ = runParley(t, env, "apply", dir)
	if code != 0 || !strings.Contains(out, "bot support: version 3 saved, version 3 published") {
		t.Fatalf("apply after a hand-made publish: exit %d\n%s", code, out)
	}
}

func TestApplyDryRunWritesNothing(t *testing.T) {
	env := parleyEnv{"PARLEY_DATA_DIR": t.TempDir(), "ACME_CRM_TOKEN": "v"}
	dir := gitopsDir(t)
	code, out, stderr := runParley(t, env, "apply", "--dry-run", "--prune", dir)
	if code != 0 || !strings.Contains(out, "tenant acme-outdoor: would be created") || !strings.Contains(out, "bot support: would be created and published") ||
		!strings.Contains(out, "Dry run, nothing written:") {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	if counts := versionCounts(t, env); len(counts) != 0 {
		t.Fatalf("a dry run wrote bots %v", counts)
	}
}

func TestApplyChecksEveryFileBeforeWriting(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(t *testing.T, dir string)
		env   parleyEnv
		wants []string
	}{
		{"a bot file whose name is no slug", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "acme-outdoor", "bots", "Bad_Slug.json"), `{"basic_settings": {"name": "B"}}`)
		}, nil, []string{"Bad_Slug.json: the file name is the bot's slug"}},
		{"a tenant directory whose name is no slug", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "Acme", "tenant.json"), `{"name": "A"}`)
		}, nil, []string{"Acme: the directory name is the tenant's slug"}},
		{"a secret whose environment variable is not set", func(t *testing.T, dir string) {}, parleyEnv{},
			[]string{"tenant.json: /secrets/crm_token: environment variable ACME_CRM_TOKEN is not set"}},
		{"tests for a bot that does not exist", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "acme-outdoor", "tests", "ghost.json"), `{"tests": []}`)
		}, nil, []string{"ghost.json: tests for a bot the directory does not have"}},
		{"an invalid test file", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "acme-outdoor", "tests", "support.json"), `{"tests": [{"name": "x", "turns": [{"user": "hi", "expect": {"stop_reason": "nope"}}]}]}`)
		}, nil, []string{"support.json: /tests/0/turns/0/expect/stop_reason: unknown stop reason"}},
		{"a channel file of an unknown kind whose secret's variable is not set", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "acme-outdoor", "channels", "chat.json"), `{"kind": "whatsapp", "bot": "support", "secret_env": "NOPE"}`)
		}, nil, []string{"chat.json: /kind: must be one of webhook, telegram, slack", "chat.json: /secret_env: only a webhook channel"}},
		{"a webhook with an unknown event, a bot the directory lacks and an unset secret variable", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "acme-outdoor", "webhooks.json"),
				`{"crm": {"url": "https://crm.example/h", "events": ["dialog.created", "dialog.exploded"], "bot": "ghost", "secret_env": "NO_SUCH_VAR"}}`)
		}, nil, []string{`webhooks.json: /crm/events/1: "dialog.exploded" is not an event type`, `webhooks.json: /crm/bot: "ghost" is not a bot of this directory`,
			"webhooks.json: /crm/secret_env: environment variable NO_SUCH_VAR is not set"}},
		{"a webhook file with an unknown field", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "acme-outdoor", "webhooks.json"), `{"crm": {"url": "https://crm.example/h", "events": ["*"], "secret": "whsec_x"}}`)
		}, nil, []string{`webhooks.json: not a valid tenant file: json: unknown field "secret"`}},
		{"a provider of an unknown kind and an unset key variable", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "acme-outdoor", "providers.json"), `{"gemini": {"kind": "google", "api_key_env": "NO_SUCH_KEY"}}`)
		}, nil, []string{"providers.json: /gemini/kind: must be openai", "providers.json: /gemini/api_key_env: environment variable NO_SUCH_KEY is not set"}},
		{"release settings of a bot the directory lacks, and a canary without its candidate", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "acme-outdoor", "tenant.json"), `{"name": "Acme", "secrets": {"crm_token": "ACME_CRM_TOKEN"},
 "bots": {"ghost": {"require_passing_tests": true}, "support": {"canary": {"percent": 0}}}}`)
		}, nil, []string{`tenant.json: /bots/ghost: "ghost" is not a bot of this directory`, "tenant.json: /bots/support/canary/percent: the share of new dialogs",
			"canary/support.json: the canary's candidate config is missing"}},
		{"a candidate no canary names", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "acme-outdoor", "canary", "support.json"), `{"basic_settings": {"name": "B"}}`)
		}, nil, []string{"canary/support.json: a candidate no canary names"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := parleyEnv{"PARLEY_DATA_DIR": t.TempDir(), "ACME_CRM_TOKEN": "v"}
			if tc.env != nil {
				delete(env, "ACME_CRM_TOKEN")
			}
			dir := gitopsDir(t)
			tc.edit(t, dir)
			code, out, stderr := runParley(t, env, "apply", dir)
			if code != 1 || !strings.Contains(stderr, "nothing was applied") {
				t.Fatalf("exit %d\n%s%s", code, out, stderr)
			}
			for _, w := range tc.wants {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if counts := versionCounts(t, env); len(counts) != 0 {
				t.Errorf("wrote bots %v", counts)
			}
		})
	}
}

func TestApplyServerNeedsAKey(t *testing.T) {
	if code, _, _ := runParley(t, parleyEnv{}, "apply", "--server", "http://127.0.0.1:1", "../../tenants"); code != 2 {
		t.Errorf("--server without --key: exit %d, want 2", code)
	}
}

func TestAModelAProviderDoesNotListIsAWarningNotAnError(t *testing.T) {
	env := releaseEnv(parleyEnv{"PARLEY_DATA_DIR": t.TempDir()})
	dir := gitopsDir(t)
	releaseFiles(t, dir)
	guide := filepath.Join(dir, "acme-outdoor", "bots", "gear-guide.json")
	cfg, _ := os.ReadFile(guide)
	cfg = []byte(strings.Replace(string(cfg), `"llm": {`,
		`"llm": {"provider": "claude", "model": "claude-unheard-of", "fallbacks": [{"provider": "local", "model": "anything"}], `, 1))
	writeFile(t, guide, string(cfg))
	want := `gear-guide.json: /llm/model: warning: model "claude-unheard-of" is not among provider "claude"'s models (claude-sonnet-4-5)`

	code, out, stderr := runParley(t, env, "apply", dir)
	if code != 0 || !strings.Contains(stderr, want) || !strings.Contains(out, "bot gear-guide: created, version 1 published") {
		t.Fatalf("apply: exit %d\n%s%s", code, out, stderr)
	}
	if strings.Contains(stderr, "/llm/fallbacks/0/model") {
		t.Errorf("a provider without a model list warned:\n%s", stderr)
	}
	code, out, _ = runParley(t, env, "validate", guide)
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("validate: exit %d\n%s", code, out)
	}
}

func TestApplyDryRunShowsWhatWouldChangeInWebhooksAndProviders(t *testing.T) {
	env := releaseEnv(parleyEnv{"PARLEY_DATA_DIR": t.TempDir()})
	dir := gitopsDir(t)
	releaseFiles(t, dir)
	if code, out, stderr := runParley(t, env, "apply", dir); code != 0 {
		t.Fatalf("apply: %d %s%s", code, out, stderr)
	}
	acme := filepath.Join(dir, "acme-outdoor")
	writeFile(t, filepath.Join(acme, "webhooks.json"), `{"crm": {"url": "http://127.0.0.1:9/crm", "events": ["*"], "bot": "support"},
 "new": {"url": "http://127.0.0.1:9/new", "events": ["*"]}}`)
	writeFile(t, filepath.Join(acme, "providers.json"), `{"claude": {"kind": "anthropic", "base_url": "https://claude-proxy.acme.example"}}`)
	writeFile(t, filepath.Join(acme, "tenant.json"), `{"name": "Acme Outdoor", "secrets": {"crm_token": "ACME_CRM_TOKEN"},
 "bots": {"support": {"require_passing_tests": false, "canary": {"percent": 50}}}}`)

	code, out, _ := runParley(t, env, "apply", "--dry-run", "--prune", dir)
	for _, want := range []string{"webhook crm: would change description, events", "webhook new: would be created (http://127.0.0.1:9/new)",
		"webhook audit: not in the directory; would be deleted", "provider claude: would be changed (anthropic at https://claude-proxy.acme.example)",
		"provider local: not in the directory; would be deleted", "secret provider_claude_api_key: not in the directory; would be deleted",
		"bot support: would change: publishes no longer need passing tests", "bot support: would send 50% of new dialogs to"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	if code != 0 {
		t.Fatalf("dry run: exit %d", code)
	}
	code, out, _ = runParley(t, env, "apply", dir)
	if code != 0 || !strings.Contains(out, "webhook crm: changed description, events") || !strings.Contains(out, "provider claude: changed") ||
		!strings.Contains(out, "bot support: canary version 2 takes 50% of new dialogs") {
		t.Errorf("the apply after the dry run found nothing left to do: exit %d\n%s", code, out)
	}
}

func TestAFailureMidwayRollsBackTheTenantInTheDatabase(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		releaseEnv(env)
		// The server refuses the webhook's URL (the outbound policy allows
		// 127.0.0.1 on port 9 only): apply learns it only when it writes
		// the endpoint, after the tenant, its secrets, providers and bots.
		delete(env, "PARLEY_OUTBOUND_ALLOW")
		dir := gitopsDir(t)
		releaseFiles(t, dir)
		code, out, stderr := runParley(t, env, "apply", dir)
		if code != 1 || !strings.Contains(stderr, "webhooks.json") ||
			!strings.Contains(out, "tenant acme-outdoor: not applied: a change failed (see above), so every change to it was rolled back") {
			t.Fatalf("exit %d\n%s%s", code, out, stderr)
		}
		acme, _, _ := strings.Cut(out, "tenant harbor-physio")
		if strings.Contains(acme, "sk_") || strings.Contains(acme, "whsec_") {
			t.Errorf("a key or secret that was rolled back is printed:\n%s", acme)
		}
		counts := versionCounts(t, env)
		if len(counts) != 1 || counts["harbor-physio/booking"] != 1 {
			t.Errorf("bots after the failed apply: %v; want harbor-physio's only", counts)
		}
		d, err := (&Main{Stderr: os.Stderr, Getenv: env.getenv}).openData(context.Background(), false)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if _, err := d.platform.GetTenant(context.Background(), platform.Operator(), "acme-outdoor"); platform.ErrorCode(err) != platform.CodeNotFound {
			t.Errorf("the rolled-back tenant: %v; want not found", err)
		}
	})
}
