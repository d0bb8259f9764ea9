package webtest

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// The transcript of a dialog whose bot called another bot as an agent
// links the call to the sub-run's own transcript, and back.
func TestAdminFollowsAnAgentCallToItsSubRun(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, w *world, ctx context.Context) {
		op, bg := platform.Operator(), context.Background()
		config := `{"basic_settings": {"name": "Concierge"}, "agents": [{"bot": "support", "name": "ask_support"}]}`
		if _, _, err := w.svc.Bots().Create(bg, op, "acme", "concierge", []byte(config)); err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.Versions().Publish(bg, op, "acme", "concierge", 1); err != nil {
			t.Fatal(err)
		}
		c := apiclient.New(w.api.URL, w.adminKey)
		d, err := c.CreateDialog(bg, "acme", "concierge", apiclient.CreateDialogRequest{UserID: "u-9"})
		if err != nil {
			t.Fatal(err)
		}
		turn, err := c.SendMessage(bg, "acme", d.ID, "ask the agent")
		if err != nil || turn.Done == nil || turn.Done.Text != "Tool said: Echo: hello from the concierge" {
			t.Fatalf("turn %+v %v", turn, err)
		}
		subs, err := c.ListDialogs(bg, "acme", "", "", "")
		if err != nil {
			t.Fatal(err)
		}
		var sub string
		for _, s := range subs.Dialogs {
			if s.ParentDialogID == d.ID {
				sub = s.ID
			}
		}
		if sub == "" {
			t.Fatalf("no sub-run dialog among %+v", subs.Dialogs)
		}
		run(t, ctx, "sign in", w.signInWithKey()...)
		run(t, ctx, "follow the agent call",
			chromedp.Navigate(w.api.URL+"/admin/#/t/acme/dialogs/"+d.ID),
			until(contains("document", "h1", d.ID)),
			do(`document.querySelector('details.tool').open = true`),
			until(contains("document", "details.tool p", "Agent sub-run: "+sub)),
			chromedp.Click(chromedp.CSS(`details.tool p a`)),
			until(contains("document", "h1", sub)),
			until(contains("document", "dl.facts", "Agent call of")),
			until(contains("document", ".transcript", "hello from the concierge")),
		)
		screenshot(t, ctx, "admin-agent-sub-run")
	})
}

// Deleting a bot that another bot's live config calls as an agent is
// refused, and the bot's page says which bots call it; once none does,
// the delete goes through and the page returns to the bot list.
func TestAdminDeleteOfABotAnotherCallsSaysWhoCallsIt(t *testing.T) {
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		op, bg := platform.Operator(), context.Background()
		if _, _, err := w.svc.Bots().Create(bg, op, "acme", "concierge", []byte(`{"basic_settings": {"name": "Concierge"}, "agents": [{"bot": "support"}]}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.Versions().Publish(bg, op, "acme", "concierge", 1); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, "sign in", w.signInWithKey()...)
		run(t, ctx, "try to delete support",
			chromedp.Navigate(w.api.URL+"/admin/#/t/acme/bots/support"),
			do(`window.confirm = () => true`),
			chromedp.Click(chromedp.Search(`//button[text()="Delete bot"]`)),
			until(contains("document", ".alert.error", "bot support is used as an agent by: concierge (v1)")),
		)
		screenshot(t, ctx, "admin-bot-delete-refused")
		if _, _, err := w.svc.Versions().Create(bg, op, "acme", "concierge", []byte(`{"basic_settings": {"name": "Concierge"}}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.Versions().Publish(bg, op, "acme", "concierge", 2); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, "delete support",
			chromedp.Click(chromedp.Search(`//button[text()="Delete bot"]`)),
			until(`location.hash === '#/t/acme'`),
			until(contains("document", "main table", "concierge")),
		)
		if _, err := w.svc.Bots().Get(bg, op, "acme", "support"); platform.ErrorCode(err) != platform.CodeNotFound {
			t.Errorf("support after the delete: %v", err)
		}
	})
}
