package apply

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/apply/applytest"
	"github.com/parleyhq/parley/pkg/webhook"
)

// TestApplyWritesChannelsAlikeToTheDatabaseAndThroughTheServer applies
// channel files (a webhook channel whose secret comes from the
// environment, a Telegram channel naming its token's tenant secret) to the
// database and to a running server, and both end with the same channels.
func TestApplyWritesChannelsAlikeToTheDatabaseAndThroughTheServer(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tg *targets) {
		secret, _ := webhook.NewSecret()
		dir := applytest.GitopsDir(t, "../../tenants")
		applytest.WriteFile(t, filepath.Join(dir, "acme-outdoor", "channels", "website.json"), `{"kind": "webhook", "bot": "support", "secret_env": "ACME_CHANNEL_SECRET"}`)
		applytest.WriteFile(t, filepath.Join(dir, "acme-outdoor", "channels", "telegram.json"), `{"kind": "telegram", "bot": "support", "secrets": {"bot_token": "crm_token"}}`)
		tg.env["ACME_CRM_TOKEN"], tg.env["ACME_CHANNEL_SECRET"] = "crm-secret-value", secret
		applyBoth := func(t *testing.T, opts Options) []string {
			t.Helper()
			return tg.applyBoth(t, dir, opts)
		}
		wantOutput := func(t *testing.T, outs []string, wants ...string) {
			t.Helper()
			for _, out := range outs {
				for _, w := range wants {
					if !strings.Contains(out, w) {
						t.Errorf("output lacks %q:\n%s", w, out)
					}
				}
			}
		}
		compare := func(t *testing.T) map[string]channelState {
			t.Helper()
			byName := func(target Target) map[string]channelState {
				list, err := target.channels(context.Background(), "acme-outdoor")
				if err != nil {
					t.Fatal(err)
				}
				out := map[string]channelState{}
				for _, c := range list {
					out[c.name] = c
				}
				return out
			}
			db, viaServer := byName(tg.db), byName(tg.api)
			if !reflect.DeepEqual(db, viaServer) {
				t.Fatalf("the database holds\n%+v\nthe server holds\n%+v", db, viaServer)
			}
			return db
		}

		outs := applyBoth(t, Options{})
		wantOutput(t, outs, "channel telegram: created, inbound path /v1/channels/chn_", "secret token (for setWebhook)", "channel website: created")
		for _, out := range outs {
			if strings.Contains(out, secret) {
				t.Errorf("apply printed the secret it took from the environment:\n%s", out)
			}
		}
		state := compare(t)
		if tg := state["telegram"]; tg.kind != "telegram" || tg.bot != "support" || !tg.enabled || tg.secrets["bot_token"] != "crm_token" {
			t.Fatalf("telegram channel %+v", tg)
		}

		t.Run("a second apply leaves the channels unchanged", func(t *testing.T) {
			wantOutput(t, applyBoth(t, Options{}), "channel telegram: unchanged", "channel website: unchanged")
		})
		t.Run("an edited file updates its channel and --prune deletes a dropped one", func(t *testing.T) {
			applytest.WriteFile(t, filepath.Join(dir, "acme-outdoor", "channels", "telegram.json"), `{"kind": "telegram", "bot": "support", "secrets": {"bot_token": "crm_token"}, "enabled": false}`)
			os.Remove(filepath.Join(dir, "acme-outdoor", "channels", "website.json"))
			wantOutput(t, applyBoth(t, Options{Prune: true}), "channel telegram: updated", "channel website: not in the directory; deleted")
			state := compare(t)
			if _, ok := state["website"]; ok || state["telegram"].enabled {
				t.Fatalf("after the edit and --prune: %+v", state)
			}
		})
	})
}
