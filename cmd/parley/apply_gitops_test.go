package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
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
}

type tenantState struct {
	Secrets []string
	Bots    map[string]botState
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
		ts := tenantState{Secrets: secrets, Bots: map[string]botState{}}
		for bot, lb := range live {
			ts.Bots[bot] = botState{Published: lb.published, Versions: versions(slug, bot), Fingerprint: lb.fingerprint,
				Config: string(compactJSON(lb.config)), Tests: string(compactJSON(lb.tests))}
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
		dbEnv["ACME_CRM_TOKEN"] = "crm-secret-value"
		srvEnv := parleyEnv{"PARLEY_DATA_DIR": t.TempDir(), "PARLEY_PLATFORM_TOKEN": e2eToken, "ACME_CRM_TOKEN": "crm-secret-value"}
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
		support := state["acme-outdoor"].Bots["support"]
		if support.Published != 1 || support.Tests == "" || !reflect.DeepEqual(state["acme-outdoor"].Secrets, []string{"crm_token"}) {
			t.Fatalf("after the first apply: %+v", state["acme-outdoor"])
		}

		t.Run("a second apply changes nothing on either", func(t *testing.T) {
			dbOut, srvOut := applyBoth(t)
			for _, out := range []string{dbOut, srvOut} {
				if !strings.Contains(out, "0 tenants created, 0 bots created, 0 new versions, 0 publishes") {
					t.Errorf("second apply changed something:\n%s", out)
				}
			}
			compare(t)
		})

		t.Run("an edit, a new test and a removed bot with --prune apply alike", func(t *testing.T) {
			cfg, _ := os.ReadFile(filepath.Join(dir, "acme-outdoor", "bots", "support.json"))
			writeFile(t, filepath.Join(dir, "acme-outdoor", "bots", "support.json"), string(withGreeting(t, cfg, "Edited greeting")))
			tests, _ := os.ReadFile(filepath.Join(dir, "harbor-physio", "tests", "booking.json"))
			writeFile(t, filepath.Join(dir, "harbor-physio", "tests", "booking.json"), strings.Replace(string(tests), "a first visit is booked", "a first visit gets booked", 1))
			os.Remove(filepath.Join(dir, "acme-outdoor", "bots", "gear-guide.json"))
			os.Remove(filepath.Join(dir, "acme-outdoor", "tests", "gear-guide.json"))
			dbOut, srvOut := applyBoth(t, "--prune")
			for _, out := range []string{dbOut, srvOut} {
				for _, want := range []string{"bot support: version 2 saved, version 2 published", "bot booking: version 2 saved, version 2 published", "bot gear-guide: not in the directory; deleted"} {
					if !strings.Contains(out, want) {
						t.Errorf("output lacks %q:\n%s", want, out)
					}
				}
			}
			state := compare(t)
			if _, ok := state["acme-outdoor"].Bots["gear-guide"]; ok {
				t.Errorf("gear-guide survived --prune")
			}
			if !strings.Contains(state["acme-outdoor"].Bots["support"].Config, "Edited greeting") {
				t.Errorf("support's live config = %s", state["acme-outdoor"].Bots["support"].Config)
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
	// Someone saves and publishes version 2 by hand: the files no longer match what is live.
	cfg, _ := os.ReadFile(filepath.Join(dir, "acme-outdoor", "bots", "support.json"))
	if _, _, err := d.platform.CreateVersion(ctx, op, "acme-outdoor", "support", withGreeting(t, cfg, "Hand-made")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.platform.Publish(ctx, op, "acme-outdoor", "support", 2); err != nil {
		t.Fatal(err)
	}
	d.Close()

	code, out, _ := runParley(t, env, "apply", "--dry-run", dir)
	if code != 0 || !strings.Contains(out, "bot support: differs from live version 2") ||
		!strings.Contains(out, `-    "greeting": "Hand-made"`) || !strings.Contains(out, "+++ "+filepath.Join(dir, "acme-outdoor", "bots", "support.json")) {
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
