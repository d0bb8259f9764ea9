package webtest

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/parleyhq/parley/pkg/platform"
)

// TestAnInvitedEditorSignsInAndCannotDoAnAdminsWork: the owner invites an
// editor on the Members page and reads it in the audit log; the editor
// opens the one-time link, chooses a password, is signed in, and finds the
// admin's pages hidden, refused when opened anyway, and the API refusing.
func TestAnInvitedEditorSignsInAndCannotDoAnAdminsWork(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		base := w.api.URL + "/admin/#/t/acme"
		const editorEmail, editorPassword = "eve@acme.test", "plum tractor velvet"
		run(t, ctx, "owner signs in",
			chromedp.Navigate(w.api.URL+"/admin/"),
			chromedp.WaitVisible(chromedp.CSS(`input[name="email"]`)),
			chromedp.SendKeys(chromedp.CSS(`input[name="email"]`), ownerEmail),
			chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), ownerPassword),
			chromedp.Click(chromedp.CSS(`form:has(input[name="email"]) button[type="submit"]`)),
			until(contains("document", ".who", ownerEmail)),
		)
		var link string
		t.Run("the owner invites an editor and gets a one-time link", func(t *testing.T) {
			run(t, ctx, "invite",
				chromedp.Navigate(base+"/members"),
				chromedp.WaitVisible(chromedp.CSS(`form input[name="email"]`)),
				chromedp.SendKeys(chromedp.CSS(`form input[name="email"]`), editorEmail),
				chromedp.SetValue(chromedp.CSS(`form select[name="role"]`), "editor"),
				chromedp.Click(chromedp.Search(`//button[text()="Invite"]`)),
				until(`document.querySelector('.alert.once code.invite-link') !== null`),
				until(contains("document", `tr[data-email="eve@acme.test"]`, "invited")),
			)
			link = eval[string](t, ctx, `document.querySelector('.alert.once code.invite-link').textContent`)
			if !strings.HasPrefix(link, w.api.URL+"/admin/#/invite/inv_") {
				t.Fatalf("invite link %q", link)
			}
			screenshot(t, ctx, "admin-members")
		})
		t.Run("the audit log shows the invitation", func(t *testing.T) {
			run(t, ctx, "audit",
				chromedp.Navigate(base+"/audit"),
				until(contains("document", `tr[data-action="member.invited"]`, editorEmail)),
				until(contains("document", `tr[data-action="member.invited"]`, ownerEmail)),
			)
			screenshot(t, ctx, "admin-audit")
		})
		run(t, ctx, "owner signs out",
			chromedp.Click(chromedp.Search(`//button[text()="Sign out"]`)),
			chromedp.WaitVisible(chromedp.CSS(`main.signin input[name="email"]`)),
		)
		t.Run("the editor sets a password from the link and is signed in", func(t *testing.T) {
			run(t, ctx, "accept",
				chromedp.Navigate(link),
				chromedp.WaitVisible(chromedp.CSS(`input[name="new_password"]`)),
				chromedp.SendKeys(chromedp.CSS(`input[name="new_password"]`), editorPassword),
				chromedp.SendKeys(chromedp.CSS(`input[name="repeat_password"]`), editorPassword),
				chromedp.Click(chromedp.Search(`//button[text()="Set password and sign in"]`)),
				until(contains("document", ".who", editorEmail)),
				until(contains("document", "main table a", "Acme Support")),
			)
			if strings.Contains(eval[string](t, ctx, `location.href`), "inv_") {
				t.Errorf("the used invite token stays in the address bar")
			}
		})
		t.Run("the admin's pages are not offered to the editor", func(t *testing.T) {
			nav := eval[string](t, ctx, textOf("document", "nav a"))
			for _, hidden := range []string{"API keys", "Webhooks", "Audit log"} {
				if strings.Contains(nav, hidden) {
					t.Errorf("the editor's navigation offers %s: %q", hidden, nav)
				}
			}
			if !strings.Contains(nav, "Members") || !strings.Contains(nav, "Bots") {
				t.Errorf("the editor's navigation %q lacks Bots or Members", nav)
			}
			screenshot(t, ctx, "admin-editor")
		})
		t.Run("opened anyway, the keys page is refused", func(t *testing.T) {
			run(t, ctx, "keys", chromedp.Navigate(base+"/keys"), until(contains("document", "main .alert.error", "not allowed")))
		})
		t.Run("the members page lists without letting the editor change anyone", func(t *testing.T) {
			run(t, ctx, "members", chromedp.Navigate(base+"/members"), until(contains("document", "main table", ownerEmail)))
			if n := eval[int](t, ctx, `document.querySelectorAll('main input[name="email"], main select, main button.danger').length`); n != 0 {
				t.Errorf("the editor's members page has %d controls to change members", n)
			}
		})
		t.Run("the API refuses the editor an admin's work", func(t *testing.T) {
			for _, call := range []string{
				`fetch('/v1/tenants/acme/api-keys').then(r => r.status)`,
				`fetch('/v1/tenants/acme/members', {method: 'POST', headers: {'Content-Type': 'application/json', 'X-Parley-CSRF': '1'}, body: JSON.stringify({email: 'mallory@x.test', role: 'admin'})}).then(r => r.status)`,
				`fetch('/v1/tenants/acme/audit-log').then(r => r.status)`,
			} {
				if status := eval[int](t, ctx, call); status != 403 {
					t.Errorf("%s = %d, want 403", call, status)
				}
			}
			ms, err := w.svc.Members().List(context.Background(), platform.Operator(), "acme")
			if err != nil || len(ms) != 2 {
				t.Fatalf("members %+v %v, want the owner and the editor only", ms, err)
			}
		})
	})
}
