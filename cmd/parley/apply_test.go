package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/apply"
	"github.com/parleyhq/parley/pkg/apply/applytest"
	"github.com/parleyhq/parley/pkg/platform"
)

// versionCounts opens the database the way the commands do and counts each
// bot's versions, keyed "tenant/bot".
func versionCounts(t *testing.T, env parleyEnv) map[string]int {
	t.Helper()
	ctx := context.Background()
	d, err := (&Main{Stderr: os.Stderr, Getenv: env.getenv}).openData(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	svc, op := d.platform, platform.Operator()
	counts := map[string]int{}
	tenants, _, err := svc.Tenants().List(ctx, op, platform.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range tenants {
		bots, _, err := svc.Bots().List(ctx, op, tn.Slug, platform.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bots {
			vs, _, err := svc.Versions().List(ctx, op, tn.Slug, b.Slug, platform.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			counts[tn.Slug+"/"+b.Slug] = len(vs)
			if b.PublishedVersion != len(vs) {
				t.Errorf("%s/%s publishes version %d, want the newest, %d", tn.Slug, b.Slug, b.PublishedVersion, len(vs))
			}
		}
	}
	return counts
}

var adminKeyLine = regexp.MustCompile(`admin API key \(shown this once; store it now\): sk_\w+`)

func TestApplyingTheExampleTenantsTwiceCreatesNothingTheSecondTime(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		dir := applytest.CopyTree(t, "../../tenants")
		code, first, stderr := runParley(t, env, "apply", dir)
		if code != 0 {
			t.Fatalf("first apply exited %d:\n%s%s", code, first, stderr)
		}
		tenants, _ := apply.TenantDirs(dir)
		if got := len(adminKeyLine.FindAllString(first, -1)); got != len(tenants) {
			t.Errorf("first apply printed %d admin keys, want one per tenant (%d):\n%s", got, len(tenants), first)
		}
		if !strings.Contains(first, "identity: user tokens verified with the keys at https://shop.acme-outdoor.example/.well-known/jwks.json") {
			t.Errorf("the first apply did not set acme-outdoor's identity settings from tenant.json:\n%s", first)
		}
		if !strings.Contains(first, "retention: dialogs deleted 365 days after their last activity") {
			t.Errorf("the first apply did not set acme-outdoor's retention_days from tenant.json:\n%s", first)
		}
		if !strings.Contains(first, "idle period: outcomes computed after 20 quiet minutes") {
			t.Errorf("the first apply did not set acme-outdoor's idle_minutes from tenant.json:\n%s", first)
		}
		before := versionCounts(t, env)
		if len(before) == 0 {
			t.Fatal("the first apply created no bots")
		}
		for bot, n := range before {
			if n != 1 {
				t.Errorf("%s has %d versions after the first apply, want 1", bot, n)
			}
		}

		code, second, stderr := runParley(t, env, "apply", dir)
		if code != 0 {
			t.Fatalf("second apply exited %d:\n%s%s", code, second, stderr)
		}
		if !strings.Contains(first, "knowledge base help-center: source returns.md: added") {
			t.Errorf("the first apply did not upload acme-outdoor's help-center knowledge base:\n%s", first)
		}
		if adminKeyLine.MatchString(second) || !strings.Contains(second, "0 tenants created, 0 bots created, 0 new versions, 0 publishes") ||
			!strings.Contains(second, "0 knowledge sources added or replaced") ||
			!strings.Contains(second, "identity: unchanged") || strings.Contains(second, "retention:") {
			t.Errorf("the second apply changed something:\n%s", second)
		}
		after := versionCounts(t, env)
		for bot, n := range before {
			if after[bot] != n {
				t.Errorf("%s went from %d to %d versions on the second apply", bot, n, after[bot])
			}
		}

		t.Run("then one edited config makes exactly one new, published version", func(t *testing.T) {
			path := filepath.Join(dir, "acme-outdoor", "bots", "support.json")
			cfg, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, applytest.WithGreeting(t, cfg, "Edited greeting"), 0o644); err != nil {
				t.Fatal(err)
			}
			if code, out, stderr := runParley(t, env, "apply", dir); code != 0 {
				t.Fatalf("apply after the edit exited %d:\n%s%s", code, out, stderr)
			}
			edited := versionCounts(t, env)
			for bot, n := range before {
				want := n
				if bot == "acme-outdoor/support" {
					want = n + 1
				}
				if edited[bot] != want {
					t.Errorf("%s has %d versions after editing support.json, want %d", bot, edited[bot], want)
				}
			}
		})
	})
}

func TestApplyReportsEveryBrokenFileAndAppliesNothing(t *testing.T) {
	t.Parallel()
	env := parleyEnv{"PARLEY_DATA_DIR": t.TempDir()}
	dir := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("shop/tenant.json", `{"name": "Shop"}`)
	write("shop/bots/broken.json", `{"basic_settings": {"name": "B", "colour": "red"}}`)
	write("shop/bots/fine.json", `{"basic_settings": {"name": "Fine"}}`)
	write("cafe/tenant.json", `{"name": "Cafe", "plan": "gold"}`)
	code, stdout, stderr := runParley(t, env, "apply", dir)
	if code != 1 {
		t.Errorf("exit code %d, want 1 for a broken file", code)
	}
	for _, want := range []string{
		filepath.Join(dir, "shop", "bots", "broken.json") + ": /basic_settings/colour: ",
		filepath.Join(dir, "cafe", "tenant.json") + ": ",
		"2 file(s) have problems; nothing was applied.",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if stdout != "" {
		t.Errorf("something was applied:\n%s", stdout)
	}
	if counts := versionCounts(t, env); len(counts) != 0 {
		t.Errorf("the database holds bots %v after a refused apply", counts)
	}
	// Once the files are fixed, everything applies.
	write("shop/bots/broken.json", `{"basic_settings": {"name": "B"}}`)
	write("cafe/tenant.json", `{"name": "Cafe"}`)
	if code, _, stderr := runParley(t, env, "apply", dir); code != 0 {
		t.Fatalf("exit %d after fixing the files: %s", code, stderr)
	}
	if counts := versionCounts(t, env); len(counts) != 2 {
		t.Errorf("bots after the fix = %v, want shop/broken and shop/fine", counts)
	}
}

func TestTenantCreatePrintsTheAdminKeyOnceAndRefusesATakenSlug(t *testing.T) {
	t.Parallel()
	env := parleyEnv{"PARLEY_DATA_DIR": t.TempDir()}
	code, stdout, stderr := runParley(t, env, "tenant", "create", "acme", "--name", "Acme Inc.")
	if code != 0 || !regexp.MustCompile(`(?m)^sk_\w+$`).MatchString(stdout) {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s\nwant 0 and the key on its own line", code, stdout, stderr)
	}
	code, _, stderr = runParley(t, env, "tenant", "create", "acme")
	if code != 1 || !strings.Contains(stderr, "already exists") {
		t.Errorf("second create: exit %d, stderr %q; want 1 and a conflict message", code, stderr)
	}
	if code, _, _ := runParley(t, env, "tenant", "delete", "acme"); code != 2 {
		t.Errorf("unknown subcommand: exit %d, want 2", code)
	}
}

func TestMigrateTwiceLeavesTheSchemaAtTheSameVersion(t *testing.T) {
	t.Parallel()
	forEachEmptyDatabase(t, func(t *testing.T, env parleyEnv) {
		code, first, stderr := runParley(t, env, "migrate")
		if code != 0 || !strings.Contains(first, "schema version") {
			t.Fatalf("migrate: exit %d, %s%s", code, first, stderr)
		}
		if _, second, _ := runParley(t, env, "migrate"); second != first {
			t.Errorf("second migrate said %q, first %q", second, first)
		}
	})
}

// A bot is applied after the bots it calls as agents, whatever its file
// name: saving it checks they exist.
func TestApplyCreatesTheBotsABotCallsAsAgentsFirst(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		dir := t.TempDir()
		write := func(rel, body string) {
			path := filepath.Join(dir, rel)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("crew/tenant.json", `{"name": "Crew"}`)
		write("crew/bots/a-captain.json", `{"basic_settings": {"name": "Captain"}, "agents": [{"bot": "b-mate"}]}`)
		write("crew/bots/b-mate.json", `{"basic_settings": {"name": "Mate"}, "agents": [{"bot": "c-cook"}]}`)
		write("crew/bots/c-cook.json", `{"basic_settings": {"name": "Cook"}}`)
		if code, out, stderr := runParley(t, env, "apply", dir); code != 0 {
			t.Fatalf("apply exited %d:\n%s%s", code, out, stderr)
		}
		if got := versionCounts(t, env); got["crew/a-captain"] != 1 || got["crew/b-mate"] != 1 || got["crew/c-cook"] != 1 {
			t.Fatalf("versions = %v", got)
		}
	})
}

// --prune deletes a bot after the pruned bots that call it as an agent,
// whatever their names; and a bot that a kept bot still calls is not
// deleted: the apply fails and names the caller, to the database and
// through the server alike.
func TestApplyPruneDeletesCallersBeforeTheAgentsTheyCall(t *testing.T) {
	crew := func(t *testing.T) (dir string, write func(rel, body string)) {
		dir = t.TempDir()
		write = func(rel, body string) {
			path := filepath.Join(dir, rel)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("crew/tenant.json", `{"name": "Crew"}`)
		write("crew/bots/a-cook.json", `{"basic_settings": {"name": "Cook"}}`)
		write("crew/bots/b-mate.json", `{"basic_settings": {"name": "Mate"}, "agents": [{"bot": "a-cook"}]}`)
		write("crew/bots/c-captain.json", `{"basic_settings": {"name": "Captain"}, "agents": [{"bot": "b-mate"}]}`)
		return dir, write
	}
	targets := map[string]func(t *testing.T) (env parleyEnv, flags []string){
		"to the database": func(t *testing.T) (parleyEnv, []string) {
			return parleyEnv{"PARLEY_DATA_DIR": t.TempDir()}, nil
		},
		"through the server": func(t *testing.T) (parleyEnv, []string) {
			srv := startParley(t, parleyEnv{"PARLEY_DATA_DIR": t.TempDir(), "PARLEY_PLATFORM_TOKEN": e2eToken})
			return parleyEnv{}, []string{"--server", srv.URL, "--key", e2eToken}
		},
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			apply := func(t *testing.T, env parleyEnv, flags []string, dir string, extra ...string) (int, string) {
				t.Helper()
				code, out, stderr := runParley(t, env, append(append(append([]string{"apply"}, flags...), extra...), dir)...)
				return code, out + stderr
			}
			t.Run("two dropped bots, one calling the other, are both deleted", func(t *testing.T) {
				env, flags := target(t)
				dir, _ := crew(t)
				if code, out := apply(t, env, flags, dir); code != 0 {
					t.Fatalf("apply: exit %d\n%s", code, out)
				}
				os.Remove(filepath.Join(dir, "crew", "bots", "a-cook.json"))
				os.Remove(filepath.Join(dir, "crew", "bots", "b-mate.json"))
				os.WriteFile(filepath.Join(dir, "crew", "bots", "c-captain.json"), []byte(`{"basic_settings": {"name": "Captain"}}`), 0o644)
				code, out := apply(t, env, flags, dir, "--prune")
				if code != 0 || !strings.Contains(out, "bot a-cook: not in the directory; deleted") || !strings.Contains(out, "bot b-mate: not in the directory; deleted") {
					t.Fatalf("apply --prune: exit %d\n%s", code, out)
				}
			})
			t.Run("a dropped bot that a kept bot calls is not deleted, and the caller is named", func(t *testing.T) {
				env, flags := target(t)
				dir, _ := crew(t)
				if code, out := apply(t, env, flags, dir); code != 0 {
					t.Fatalf("apply: exit %d\n%s", code, out)
				}
				os.Remove(filepath.Join(dir, "crew", "bots", "a-cook.json"))
				code, out := apply(t, env, flags, dir, "--prune")
				if code == 0 || !strings.Contains(out, "bot a-cook is used as an agent by: b-mate (v1)") || strings.Contains(out, "a-cook: not in the directory; deleted") {
					t.Fatalf("apply --prune: exit %d\n%s", code, out)
				}
			})
		})
	}
}

// A tenant's key sees only its own tenant: another tenant, existing or
// not, answers 404 to it. apply --dry-run with such a key said the tenant
// "would be created", which that key could never do; it is an error that
// says the key cannot see or manage the tenant, with or without
// --dry-run, whether the tenant exists or not.
func TestApplyWithAnotherTenantsKeySaysItCannotManageTheTenant(t *testing.T) {
	srv := startParley(t, parleyEnv{"PARLEY_DATA_DIR": t.TempDir(), "PARLEY_PLATFORM_TOKEN": e2eToken})
	tenantDir := func(slug string) string {
		dir := t.TempDir()
		applytest.WriteFile(t, filepath.Join(dir, slug, "tenant.json"), `{"name": "`+slug+`"}`)
		applytest.WriteFile(t, filepath.Join(dir, slug, "bots", "helper.json"), `{"basic_settings": {"name": "Helper"}}`)
		return dir
	}
	code, out, stderr := runParley(t, parleyEnv{}, "apply", "--server", srv.URL, "--key", e2eToken, tenantDir("crew"))
	key := regexp.MustCompile(`sk_\w+`).FindString(out)
	if code != 0 || key == "" {
		t.Fatalf("apply with the platform token: exit %d\n%s%s", code, out, stderr)
	}
	fleet := tenantDir("fleet")
	check := func(t *testing.T, flags ...string) {
		t.Helper()
		code, out, stderr := runParley(t, parleyEnv{}, append(append([]string{"apply", "--server", srv.URL, "--key", key}, flags...), fleet)...)
		if code == 0 || strings.Contains(out, "would be created") || !strings.Contains(stderr, "this key cannot see or manage tenant fleet") {
			t.Errorf("exit %d\n%s%s", code, out, stderr)
		}
	}
	t.Run("a dry run for a tenant that does not exist is an error", func(t *testing.T) { check(t, "--dry-run") })
	t.Run("an apply for a tenant that does not exist is the same error", func(t *testing.T) { check(t) })
	if code, out, stderr := runParley(t, parleyEnv{}, "apply", "--server", srv.URL, "--key", e2eToken, fleet); code != 0 {
		t.Fatalf("apply fleet with the platform token: exit %d\n%s%s", code, out, stderr)
	}
	t.Run("a dry run for another tenant that exists is the same error", func(t *testing.T) { check(t, "--dry-run") })
}
