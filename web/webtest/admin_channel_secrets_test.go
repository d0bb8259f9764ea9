package webtest

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// TestAChannelsTokensAreCreatedWhereTheChannelIsMade makes a Slack
// channel without visiting Secrets: its bot token is created in the form
// with "Save secret", its signing secret is typed as a new secret and
// saved by "Create channel" itself. The channel names both, the tenant
// holds both, and neither value shows on the page.
func TestAChannelsTokensAreCreatedWhereTheChannelIsMade(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		token := `[data-role="bot_token"]`
		signing := `[data-role="signing_secret"]`
		run(t, ctx, "open channels", append(w.signInWithKey(),
			chromedp.Navigate(w.api.URL+"/admin/#/t/acme/channels"),
			chromedp.WaitVisible(chromedp.CSS(`select[name="kind"]`)),
			chromedp.SetValue(chromedp.CSS(`select[name="kind"]`), "slack"),
			do(`document.querySelector('select[name="kind"]').dispatchEvent(new Event('change'))`),
			// The tenant has no secrets: each role offers a new one, named.
			until(`document.querySelector('`+token+` select').value === '__new__'`),
			until(`document.querySelector('`+signing+` select').value === '__new__'`),
		)...)
		if got := eval[string](t, ctx, `document.querySelector('`+token+` input[name="new_secret_name"]').value`); got != "SLACK_BOT_TOKEN" {
			t.Errorf("the new bot token secret is offered as %q", got)
		}

		run(t, ctx, "save the bot token in the form",
			chromedp.SendKeys(chromedp.CSS(token+` input[name="new_secret_value"]`), "xoxb-bot-token-value"),
			chromedp.Click(chromedp.CSS(token+` .new-secret button`)),
			until(`document.querySelector('`+token+` select').value === 'SLACK_BOT_TOKEN'`),
			until(`document.querySelector('`+token+` .new-secret').hidden`),
		)
		run(t, ctx, "type the signing secret",
			chromedp.SendKeys(chromedp.CSS(signing+` input[name="new_secret_value"]`), "slack-signing-value"))
		screenshot(t, ctx, "admin-channel-secrets-form")
		run(t, ctx, "create the channel",
			chromedp.Click(chromedp.Search(`//button[text()="Create channel"]`)),
			until(contains("document", ".alert", "Channel created")),
			until(contains("document", "main table td", "SLACK_SIGNING_SECRET")),
		)
		screenshot(t, ctx, "admin-channel-secrets")

		cl := apiclient.New(w.api.URL, w.adminKey)
		chs, err := cl.ListChannels(context.Background(), "acme")
		if err != nil || len(chs.Channels) != 1 {
			t.Fatalf("channels %+v, %v", chs, err)
		}
		if got := chs.Channels[0].Secrets; got["bot_token"] != "SLACK_BOT_TOKEN" || got["signing_secret"] != "SLACK_SIGNING_SECRET" {
			t.Errorf("the channel names %v", got)
		}
		names, err := w.svc.Secrets().ListNames(context.Background(), platform.Operator(), "acme")
		if err != nil || len(names) != 2 {
			t.Fatalf("the tenant's secrets are %+v (%v); want the two created", names, err)
		}
		page := eval[string](t, ctx, `document.body.innerHTML`)
		for _, value := range []string{"xoxb-bot-token-value", "slack-signing-value"} {
			if strings.Contains(page, value) {
				t.Errorf("the page shows the secret value %q", value)
			}
		}
	})
}
