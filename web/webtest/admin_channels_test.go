package webtest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// TestAdminCreatesChannelsAndSetsTelegramsWebhook creates a webhook
// channel (its inbound URL shown, its whsec_ secret shown once) and a
// Telegram channel choosing the tenant secret of its bot token, then sets
// Telegram's webhook from the page.
func TestAdminCreatesChannelsAndSetsTelegramsWebhook(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		cl := apiclient.New(w.api.URL, w.adminKey)
		if _, err := cl.PutSecret(context.Background(), "acme", "TELEGRAM_TOKEN", "123:telegram-token"); err != nil {
			t.Fatal(err)
		}
		base := w.api.URL + "/admin/#/t/acme"
		run(t, ctx, "sign in with the admin key", w.signInWithKey()...)

		t.Run("a webhook channel shows its inbound URL and its secret once", func(t *testing.T) {
			run(t, ctx, "create webhook channel",
				chromedp.Navigate(base+"/channels"),
				chromedp.WaitVisible(chromedp.CSS(`select[name="kind"]`)),
				until(contains("document", "main .empty", "No channels yet.")),
				chromedp.Click(chromedp.Search(`//button[text()="Create channel"]`)),
				until(`document.querySelector('.alert.once code.new-key') !== null`),
				until(contains("document", "main table code.inbound-url", "/inbound")),
			)
			secret := eval[string](t, ctx, `document.querySelector('.alert.once code.new-key').textContent`)
			url := eval[string](t, ctx, `document.querySelector('code.new-inbound-url').textContent`)
			if !strings.HasPrefix(secret, "whsec_") || !strings.HasPrefix(url, w.api.URL+"/v1/channels/chn_") {
				t.Fatalf("shown secret %q and inbound URL %q", secret, url)
			}
			if tables := eval[string](t, ctx, `Array.from(document.querySelectorAll('main table')).map(t => t.outerHTML).join('')`); strings.Contains(tables, secret) {
				t.Errorf("the channel table shows the secret")
			}
			screenshot(t, ctx, "admin-channels")
		})

		t.Run("a telegram channel names its token's secret and sets Telegram's webhook", func(t *testing.T) {
			run(t, ctx, "create telegram channel",
				chromedp.SetValue(chromedp.CSS(`select[name="kind"]`), "telegram"),
				do(`document.querySelector('select[name="kind"]').dispatchEvent(new Event('change'))`),
				until(`document.querySelector('select[name="secret_bot_token"] option[value="TELEGRAM_TOKEN"]') !== null`),
				chromedp.SetValue(chromedp.CSS(`select[name="secret_bot_token"]`), "TELEGRAM_TOKEN"),
				chromedp.Click(chromedp.Search(`//button[text()="Create channel"]`)),
				until(contains("document", ".alert.once strong", "secret token")),
				until(contains("document", "main table td code", "TELEGRAM_TOKEN")),
			)
			token := eval[string](t, ctx, `document.querySelector('.alert.once code.new-key').textContent`)
			run(t, ctx, "set webhook",
				chromedp.Click(chromedp.Search(`//tr[td/div/code[text()="TELEGRAM_TOKEN"]]//button[text()="Set webhook"]`)),
				until(contains("document", ".alert", "Telegram now sends")),
			)
			var call struct {
				URL         string `json:"url"`
				SecretToken string `json:"secret_token"`
			}
			select {
			case body := <-w.webhookSet:
				if err := json.Unmarshal([]byte(body), &call); err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Telegram got no setWebhook call")
			}
			chs, err := cl.ListChannels(context.Background(), "acme")
			if err != nil || len(chs.Channels) != 2 {
				t.Fatalf("channels %+v %v", chs, err)
			}
			if call.URL != chs.Channels[1].InboundURL || call.SecretToken != token {
				t.Fatalf("setWebhook got %+v, want the channel's inbound URL %s and the secret token shown", call, chs.Channels[1].InboundURL)
			}
		})

		t.Run("rotating a webhook channel's secret shows the new one once and keeps the old for a day", func(t *testing.T) {
			chs, err := cl.ListChannels(context.Background(), "acme")
			if err != nil {
				t.Fatal(err)
			}
			hook := chs.Channels[0].ID
			run(t, ctx, "rotate",
				do(`window.confirm = () => true`),
				chromedp.Click(chromedp.Search(`//tr[@data-id="`+hook+`"]//button[text()="Rotate secret"]`)),
				until(contains("document", ".alert.once strong", "Secret rotated")),
				until(contains("document", `tr[data-id="`+hook+`"] .previous-secret`, "previous secret accepted until")),
			)
			secret := eval[string](t, ctx, `document.querySelector('.alert.once code.new-key').textContent`)
			if !strings.HasPrefix(secret, "whsec_") {
				t.Fatalf("shown secret %q", secret)
			}
			read, err := cl.GetChannel(context.Background(), "acme", hook)
			if err != nil || read.PreviousSecretExpiresAt == nil {
				t.Fatalf("the channel reads %+v, %v; want a rotation's overlap", read, err)
			}
			screenshot(t, ctx, "admin-channels-rotated")
		})
	})
}
