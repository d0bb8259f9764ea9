package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/apply/applytest"
	"github.com/parleyhq/parley/pkg/platform"
)

// releaseEnv is what applytest.ReleaseFiles's environment variables and webhook
// URLs need.
func releaseEnv(env parleyEnv) parleyEnv {
	applytest.ReleaseEnv(env)
	env["PARLEY_OUTBOUND_ALLOW"] = "127.0.0.1/32"
	env["PARLEY_OUTBOUND_PORTS"] = "9"
	return env
}

func TestApplyComparesWithTheLiveVersion(t *testing.T) {
	t.Parallel()
	env := parleyEnv{"PARLEY_DATA_DIR": t.TempDir(), "ACME_CRM_TOKEN": "v"}
	dir := applytest.GitopsDir(t, "../../tenants")
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
	if _, _, err := d.platform.Versions().Create(ctx, op, "acme-outdoor", "support", applytest.WithGreeting(t, cfg, "Hand-made & <fresh>")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.platform.Versions().Publish(ctx, op, "acme-outdoor", "support", 2); err != nil {
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
	t.Parallel()
	env := parleyEnv{"PARLEY_DATA_DIR": t.TempDir(), "ACME_CRM_TOKEN": "v"}
	dir := applytest.GitopsDir(t, "../../tenants")
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
	t.Parallel()
	tests := []struct {
		name  string
		edit  func(t *testing.T, dir string)
		env   parleyEnv
		wants []string
	}{
		{"a bot file whose name is no slug", func(t *testing.T, dir string) {
			applytest.WriteFile(t, filepath.Join(dir, "acme-outdoor", "bots", "Bad_Slug.json"), `{"basic_settings": {"name": "B"}}`)
		}, nil, []string{"Bad_Slug.json: the file name is the bot's slug"}},
		{"a tenant directory whose name is no slug", func(t *testing.T, dir string) {
			applytest.WriteFile(t, filepath.Join(dir, "Acme", "tenant.json"), `{"name": "A"}`)
		}, nil, []string{"Acme: the directory name is the tenant's slug"}},
		{"a secret whose environment variable is not set", func(t *testing.T, dir string) {}, parleyEnv{},
			[]string{"tenant.json: /secrets/crm_token: environment variable ACME_CRM_TOKEN is not set"}},
		{"tests for a bot that does not exist", func(t *testing.T, dir string) {
			applytest.WriteFile(t, filepath.Join(dir, "acme-outdoor", "tests", "ghost.json"), `{"tests": []}`)
		}, nil, []string{"ghost.json: tests for a bot the directory does not have"}},
		{"an invalid test file", func(t *testing.T, dir string) {
			applytest.WriteFile(t, filepath.Join(dir, "acme-outdoor", "tests", "support.json"), `{"tests": [{"name": "x", "turns": [{"user": "hi", "expect": {"stop_reason": "nope"}}]}]}`)
		}, nil, []string{"support.json: /tests/0/turns/0/expect/stop_reason: unknown stop reason"}},
		{"a channel file of an unknown kind whose secret's variable is not set", func(t *testing.T, dir string) {
			applytest.WriteFile(t, filepath.Join(dir, "acme-outdoor", "channels", "chat.json"), `{"kind": "whatsapp", "bot": "support", "secret_env": "NOPE"}`)
		}, nil, []string{"chat.json: /kind: must be one of webhook, telegram, slack", "chat.json: /secret_env: only a webhook channel"}},
		{"a webhook with an unknown event, a bot the directory lacks and an unset secret variable", func(t *testing.T, dir string) {
			applytest.WriteFile(t, filepath.Join(dir, "acme-outdoor", "webhooks.json"),
				`{"crm": {"url": "https://crm.example/h", "events": ["dialog.created", "dialog.exploded"], "bot": "ghost", "secret_env": "NO_SUCH_VAR"}}`)
		}, nil, []string{`webhooks.json: /crm/events/1: "dialog.exploded" is not an event type`, `webhooks.json: /crm/bot: "ghost" is not a bot of this directory`,
			"webhooks.json: /crm/secret_env: environment variable NO_SUCH_VAR is not set"}},
		{"a webhook file with an unknown field", func(t *testing.T, dir string) {
			applytest.WriteFile(t, filepath.Join(dir, "acme-outdoor", "webhooks.json"), `{"crm": {"url": "https://crm.example/h", "events": ["*"], "secret": "whsec_x"}}`)
		}, nil, []string{`webhooks.json: not a valid tenant file: json: unknown field "secret"`}},
		{"a provider of an unknown kind and an unset key variable", func(t *testing.T, dir string) {
			applytest.WriteFile(t, filepath.Join(dir, "acme-outdoor", "providers.json"), `{"gemini": {"kind": "google", "api_key_env": "NO_SUCH_KEY"}}`)
		}, nil, []string{"providers.json: /gemini/kind: must be openai", "providers.json: /gemini/api_key_env: environment variable NO_SUCH_KEY is not set"}},
		{"release settings of a bot the directory lacks, and a canary without its candidate", func(t *testing.T, dir string) {
			applytest.WriteFile(t, filepath.Join(dir, "acme-outdoor", "tenant.json"), `{"name": "Acme", "secrets": {"crm_token": "ACME_CRM_TOKEN"},
 "bots": {"ghost": {"require_passing_tests": true}, "support": {"canary": {"percent": 0}}}}`)
		}, nil, []string{`tenant.json: /bots/ghost: "ghost" is not a bot of this directory`, "tenant.json: /bots/support/canary/percent: the share of new dialogs",
			"canary/support.json: the canary's candidate config is missing"}},
		{"a candidate no canary names", func(t *testing.T, dir string) {
			applytest.WriteFile(t, filepath.Join(dir, "acme-outdoor", "canary", "support.json"), `{"basic_settings": {"name": "B"}}`)
		}, nil, []string{"canary/support.json: a candidate no canary names"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := parleyEnv{"PARLEY_DATA_DIR": t.TempDir(), "ACME_CRM_TOKEN": "v"}
			if tc.env != nil {
				delete(env, "ACME_CRM_TOKEN")
			}
			dir := applytest.GitopsDir(t, "../../tenants")
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
	t.Parallel()
	if code, _, _ := runParley(t, parleyEnv{}, "apply", "--server", "http://127.0.0.1:1", "../../tenants"); code != 2 {
		t.Errorf("--server without --key: exit %d, want 2", code)
	}
}

func TestAModelAProviderDoesNotListIsAWarningNotAnError(t *testing.T) {
	t.Parallel()
	env := releaseEnv(parleyEnv{"PARLEY_DATA_DIR": t.TempDir()})
	dir := applytest.GitopsDir(t, "../../tenants")
	applytest.ReleaseFiles(t, dir)
	guide := filepath.Join(dir, "acme-outdoor", "bots", "gear-guide.json")
	cfg, _ := os.ReadFile(guide)
	cfg = []byte(strings.Replace(string(cfg), `"llm": {`,
		`"llm": {"provider": "claude", "model": "claude-unheard-of", "fallbacks": [{"provider": "local", "model": "anything"}], `, 1))
	applytest.WriteFile(t, guide, string(cfg))
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
	t.Parallel()
	env := releaseEnv(parleyEnv{"PARLEY_DATA_DIR": t.TempDir()})
	dir := applytest.GitopsDir(t, "../../tenants")
	applytest.ReleaseFiles(t, dir)
	if code, out, stderr := runParley(t, env, "apply", dir); code != 0 {
		t.Fatalf("apply: %d %s%s", code, out, stderr)
	}
	acme := filepath.Join(dir, "acme-outdoor")
	applytest.WriteFile(t, filepath.Join(acme, "webhooks.json"), `{"crm": {"url": "http://127.0.0.1:9/crm", "events": ["*"], "bot": "support"},
 "new": {"url": "http://127.0.0.1:9/new", "events": ["*"]}}`)
	applytest.WriteFile(t, filepath.Join(acme, "providers.json"), `{"claude": {"kind": "anthropic", "base_url": "https://claude-proxy.acme.example"}}`)
	applytest.WriteFile(t, filepath.Join(acme, "tenant.json"), `{"name": "Acme Outdoor", "secrets": {"crm_token": "ACME_CRM_TOKEN"},
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
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		releaseEnv(env)
		// The server refuses the webhook's URL (the outbound policy allows
		// 127.0.0.1 on port 9 only): apply learns it only when it writes
		// the endpoint, after the tenant, its secrets, providers and bots.
		delete(env, "PARLEY_OUTBOUND_ALLOW")
		dir := applytest.GitopsDir(t, "../../tenants")
		applytest.ReleaseFiles(t, dir)
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
		if _, err := d.platform.Tenants().Get(context.Background(), platform.Operator(), "acme-outdoor"); platform.ErrorCode(err) != platform.CodeNotFound {
			t.Errorf("the rolled-back tenant: %v; want not found", err)
		}
	})
}
