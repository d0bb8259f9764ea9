package apply

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/apply/applytest"
	"github.com/parleyhq/parley/pkg/platform"
)

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
func snapshot(t *testing.T, target Target, versions func(tenant, bot string) int, tenants ...string) map[string]tenantState {
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

func TestApplyThroughTheServerAndToTheDatabaseLeaveTheSameState(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tg *targets) {
		dir := applytest.GitopsDir(t, "../../tenants")
		applytest.ReleaseFiles(t, dir)
		applytest.ReleaseEnv(tg.env)
		ctx := context.Background()
		applyBoth := func(t *testing.T, opts Options) (string, string) {
			t.Helper()
			outs := tg.applyBoth(t, dir, opts)
			return outs[0], outs[1]
		}
		compare := func(t *testing.T) map[string]tenantState {
			t.Helper()
			db := snapshot(t, tg.db, func(tenant, bot string) int {
				vs, _, err := tg.dbSvc.Versions().List(ctx, platform.Operator(), tenant, bot, platform.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return len(vs)
			}, "acme-outdoor", "harbor-physio")
			viaServer := snapshot(t, tg.api, func(tenant, bot string) int {
				n, err := tg.api.latestVersion(ctx, tenant, bot)
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

		dbOut, srvOut := applyBoth(t, Options{})
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
				if strings.Contains(out, "ACME_CRM_WEBHOOK_SECRET") && strings.Contains(out, tg.env["ACME_CRM_WEBHOOK_SECRET"]) {
					t.Errorf("a secret from the environment is printed:\n%s", out)
				}
			}
		})

		t.Run("a second apply changes nothing on either", func(t *testing.T) {
			dbOut, srvOut := applyBoth(t, Options{})
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
			applytest.WriteFile(t, filepath.Join(dir, "acme-outdoor", "bots", "support.json"), string(applytest.WithGreeting(t, cfg, "Edited greeting")))
			tests, _ := os.ReadFile(filepath.Join(dir, "harbor-physio", "tests", "booking.json"))
			applytest.WriteFile(t, filepath.Join(dir, "harbor-physio", "tests", "booking.json"), strings.Replace(string(tests), "a first visit is booked", "a first visit gets booked", 1))
			os.Remove(filepath.Join(dir, "acme-outdoor", "bots", "gear-guide.json"))
			os.Remove(filepath.Join(dir, "acme-outdoor", "tests", "gear-guide.json"))
			// trip-planner calls gear-guide as an agent: it goes too, first.
			os.Remove(filepath.Join(dir, "acme-outdoor", "bots", "trip-planner.json"))
			os.Remove(filepath.Join(dir, "acme-outdoor", "tests", "trip-planner.json"))
			applytest.WriteFile(t, filepath.Join(dir, "acme-outdoor", "providers.json"), `{"claude": {"kind": "anthropic", "api_key_env": "ACME_ANTHROPIC_KEY"}}`)
			applytest.WriteFile(t, filepath.Join(dir, "acme-outdoor", "webhooks.json"), `{
 "crm": {"url": "http://127.0.0.1:9/crm-v2", "events": ["dialog.created"], "secret_env": "ACME_CRM_WEBHOOK_SECRET"}}`)
			dbOut, srvOut := applyBoth(t, Options{Prune: true})
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
