package webtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// TestAdminSeesAndDeletesWhatABotRemembersAboutAUser opens a dialog's page
// as its tenant's admin: the notes the bot keeps about the dialog's user
// are listed there, and one is deleted from it; an image the user sent
// shows as its type and size.
func TestAdminSeesAndDeletesWhatABotRemembersAboutAUser(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		bg := context.Background()
		c := apiclient.New(w.api.URL, w.adminKey)
		d, err := c.CreateDialog(bg, "acme", "support", apiclient.CreateDialogRequest{UserID: "u-9"})
		if err != nil {
			t.Fatal(err)
		}
		tn, err := w.svc.Tenants().Get(bg, platform.Operator(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range [][2]string{{"name", "Ann"}, {"plan", "gold"}} {
			n := &store.MemoryNote{TenantID: tn.ID, BotID: d.BotID, UserID: "u-9", Key: kv[0], Value: kv[1], DialogID: d.ID, UpdatedAt: time.Now()}
			if err := w.st.Tenant(n.TenantID).Memory().Remember(bg, n, 10); err != nil {
				t.Fatal(err)
			}
		}
		// The user also sent a picture: the page shows its type and size.
		err = c.Do(bg, "POST", "/v1/tenants/acme/dialogs/"+d.ID+"/messages",
			apiclient.SendMessageRequest{Text: "look", Images: []apiclient.ImageInput{{Data: pixel}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		run(t, ctx, "open the dialog", append(w.signInWithKey(),
			chromedp.Navigate(w.api.URL+"/admin/#/t/acme/dialogs/"+d.ID),
			until(contains("document", "section.card h2", "Memory of this user")),
			until(contains("document", "tr[data-note] td", "gold")),
			until(contains("document", ".turn-image", fmt.Sprintf("[image: image/png, %d bytes]", len(pixel)))),
		)...)
		screenshot(t, ctx, "admin-dialog-memory")
		run(t, ctx, "delete a note",
			do(`window.confirm = () => true`),
			chromedp.Click(chromedp.Search(`//tr[td/code[text()="plan"]]//button[text()="Delete"]`)),
			until(`document.querySelectorAll('tr[data-note]').length === 1`),
		)
		notes, err := c.UserMemory(bg, "acme", "u-9")
		if err != nil || len(notes.Notes) != 1 || notes.Notes[0].Key != "name" {
			t.Fatalf("notes after deleting one in the admin UI: %+v %v", notes, err)
		}
	})
}
