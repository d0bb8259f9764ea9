package webtest

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// TestAdminStartsAndPromotesACanary starts a canary on the bot page, sees
// new dialogs go to it, and promotes it.
func TestAdminStartsAndPromotesACanary(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		if _, _, err := w.svc.Versions().Create(context.Background(), platform.Operator(), "acme", "support", []byte(w.draftConfig())); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, "sign in and open the bot", append(w.openBotPage(), until(contains("document", "p.muted", "No canary")))...)
		run(t, ctx, "start the canary",
			chromedp.SetValue(chromedp.CSS(`input[name="canary-percent"]`), "100"),
			chromedp.Click(chromedp.Search(`//button[text()="Start canary"]`)),
			until(contains("document", ".alert.ok", "v2 now takes 100% of new dialogs.")),
			until(contains("document", "table.canary-usage th", "canary v2")),
		)
		d, err := apiclient.New(w.api.URL, w.adminKey).CreateDialog(context.Background(), "acme", "support", apiclient.CreateDialogRequest{})
		if err != nil || d.Version != 2 {
			t.Fatalf("a new dialog = %+v, %v; want version 2, the canary", d, err)
		}
		run(t, ctx, "promote",
			chromedp.Click(chromedp.Search(`//button[text()="Promote"]`)),
			until(contains("document", ".title-row .badge", "live: v2")),
			until(contains("document", "p.muted", "No canary")),
		)
		b, err := w.svc.Bots().Get(context.Background(), platform.Operator(), "acme", "support")
		if err != nil || b.PublishedVersion != 2 || b.CanaryVersion != 0 {
			t.Fatalf("bot = %+v, %v", b, err)
		}
	})
}
