package webtest

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// TestAdminManagesKeysSecretsAndReadsTheLog signs in with email and
// password (the session cookie) and walks the tenant's other pages: a
// widget key shown once and revoked, a secret set and deleted without its
// value ever shown, a dialog's log with its confirmed tool call, usage, and
// signing out.
func TestAdminManagesKeysSecretsAndReadsTheLog(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		dialogID := w.confirmedCancel(t)
		base := w.api.URL + "/admin/#/t/acme"

		t.Run("signing in with email and password shows the tenant", func(t *testing.T) {
			run(t, ctx, "open sign-in", chromedp.Navigate(w.api.URL+"/admin/"), chromedp.WaitVisible(chromedp.CSS(`input[name="email"]`)))
			screenshot(t, ctx, "admin-sign-in")
			run(t, ctx, "sign in",
				chromedp.SendKeys(chromedp.CSS(`input[name="email"]`), ownerEmail),
				chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), ownerPassword),
				chromedp.Click(chromedp.CSS(`form:has(input[name="email"]) button[type="submit"]`)),
				until(contains("document", "main table a", "Acme Support")),
				until(contains("document", ".who", ownerEmail)),
			)
		})

		t.Run("a widget key is shown once with its snippet, then revoked", func(t *testing.T) {
			run(t, ctx, "create key",
				chromedp.Navigate(base+"/keys"),
				chromedp.WaitVisible(chromedp.CSS(`select[name="kind"]`)),
				chromedp.SendKeys(chromedp.CSS(`input[name="name"]`), "website widget"),
				chromedp.SetValue(chromedp.CSS(`select[name="kind"]`), "pk"),
				do(`document.querySelector('select[name="kind"]').dispatchEvent(new Event('change'))`),
				chromedp.SendKeys(chromedp.CSS(`input[name="origins"]`), "https://www.acme.example"),
				chromedp.Click(chromedp.Search(`//button[text()="Create key"]`)),
				until(`document.querySelector('.alert.once code.new-key') !== null`),
			)
			key := eval[string](t, ctx, `document.querySelector('.alert.once code.new-key').textContent`)
			snippet := eval[string](t, ctx, `document.querySelector('.alert.once pre').textContent`)
			if !strings.HasPrefix(key, "pk_") || !strings.Contains(snippet, `data-key="`+key+`"`) || !strings.Contains(snippet, `data-bot="support"`) {
				t.Fatalf("shown key %q with snippet %q; want a pk_ key and a snippet embedding it", key, snippet)
			}
			screenshot(t, ctx, "admin-keys")
			run(t, ctx, "revoke",
				do(`window.confirm = () => true`),
				chromedp.Click(chromedp.Search(`//tr[td[text()="website widget"]]//button[text()="Revoke"]`)),
				until(`Array.from(document.querySelectorAll('tr.revoked td')).some(td => td.textContent === 'website widget')`),
			)
			if _, err := apiclient.New(w.api.URL, key).CreateDialog(context.Background(), "acme", "support", apiclient.CreateDialogRequest{}); err == nil {
				t.Errorf("the revoked key still starts dialogs")
			}
		})

		t.Run("a secret is set and deleted, its value never shown", func(t *testing.T) {
			const value = "crm-token-value-7f3a"
			run(t, ctx, "set secret",
				chromedp.Navigate(base+"/secrets"),
				chromedp.WaitVisible(chromedp.CSS(`input[name="value"]`)),
				chromedp.SendKeys(chromedp.CSS(`input[name="name"]`), "crm_token"),
				chromedp.SendKeys(chromedp.CSS(`input[name="value"]`), value),
				chromedp.Click(chromedp.Search(`//button[text()="Set secret"]`)),
				until(contains("document", "main table code", "crm_token")),
			)
			page := eval[string](t, ctx, `document.documentElement.outerHTML + Array.from(document.querySelectorAll('input')).map(i => i.value).join(' ')`)
			if strings.Contains(page, value) {
				t.Errorf("the page still holds the secret's value after saving it")
			}
			run(t, ctx, "delete secret",
				do(`window.confirm = () => true`),
				chromedp.Click(chromedp.Search(`//tr[td/code[text()="crm_token"]]//button[text()="Delete"]`)),
				until(contains("document", "main .empty", "No secrets yet.")),
			)
		})

		t.Run("the identity settings show the kind of key, never the secret", func(t *testing.T) {
			run(t, ctx, "identity",
				chromedp.Navigate(base+"/secrets"),
				until(contains("document", ".identity-state", "HS256 with a secret")),
			)
			if page := eval[string](t, ctx, `document.documentElement.outerHTML`); strings.Contains(page, identitySecret) {
				t.Fatalf("the page shows the identity secret")
			}
			run(t, ctx, "switch to a JWKS URL",
				chromedp.SetValue(chromedp.CSS(`.identity-form select[name="kind"]`), "jwks"),
				do(`document.querySelector('.identity-form select[name="kind"]').dispatchEvent(new Event('change'))`),
				chromedp.SendKeys(chromedp.CSS(`input[name="jwks_url"]`), "https://id.acme.example/jwks.json"),
				chromedp.SendKeys(chromedp.CSS(`input[name="audience"]`), "acme.example"),
				chromedp.Click(chromedp.Search(`//form[contains(@class,"identity-form")]//button[text()="Save"]`)),
				until(contains("document", ".identity-state", "https://id.acme.example/jwks.json")),
			)
			got, err := w.svc.Identities().Get(context.Background(), platform.Operator(), "acme")
			if err != nil || got.HasSecret || got.JWKSURL != "https://id.acme.example/jwks.json" || got.Audience != "acme.example" {
				t.Fatalf("identity settings %+v %v; want the JWKS URL and audience saved from the form", got, err)
			}
		})

		t.Run("a model provider is added with its key secret's name and models, then deleted", func(t *testing.T) {
			if _, err := apiclient.New(w.api.URL, w.adminKey).PutSecret(context.Background(), "acme", "claude_key", "sk-ant-acme"); err != nil {
				t.Fatal(err)
			}
			run(t, ctx, "add provider",
				chromedp.Navigate(base+"/providers"),
				chromedp.WaitVisible(chromedp.CSS(`input[name="api_key_secret"]`)),
				until(contains("document", "main .empty", "No providers yet")),
				chromedp.SendKeys(chromedp.CSS(`input[name="name"]`), "claude"),
				chromedp.SetValue(chromedp.CSS(`select[name="kind"]`), "anthropic"),
				chromedp.SendKeys(chromedp.CSS(`input[name="api_key_secret"]`), "claude_key"),
				chromedp.SendKeys(chromedp.CSS(`input[name="models"]`), "claude-sonnet-4-5, claude-haiku-4-5"),
				chromedp.Click(chromedp.Search(`//button[text()="Save provider"]`)),
				until(contains("document", "main table code", "https://api.anthropic.com")),
				until(contains("document", "main table td.models", "claude-sonnet-4-5, claude-haiku-4-5")),
			)
			screenshot(t, ctx, "admin-providers")
			list, err := apiclient.New(w.api.URL, w.adminKey).ListProviders(context.Background(), "acme")
			if err != nil || len(list.Providers) != 1 || list.Providers[0].Kind != "anthropic" || list.Providers[0].APIKeySecret != "claude_key" ||
				strings.Join(list.Providers[0].Models, " ") != "claude-sonnet-4-5 claude-haiku-4-5" {
				t.Fatalf("providers %+v, %v", list, err)
			}
			run(t, ctx, "delete provider",
				do(`window.confirm = () => true`),
				chromedp.Click(chromedp.Search(`//tr[td/code[text()="claude"]]//button[text()="Delete"]`)),
				until(contains("document", "main .empty", "No providers yet")),
			)
		})

		t.Run("a webhook endpoint shows its secret once, sends a test event, and is disabled", func(t *testing.T) {
			run(t, ctx, "create endpoint",
				chromedp.Navigate(base+"/webhooks"),
				chromedp.WaitVisible(chromedp.CSS(`input[name="url"]`)),
				chromedp.SendKeys(chromedp.CSS(`input[name="url"]`), "https://hooks.acme.example/parley"),
				chromedp.SendKeys(chromedp.CSS(`input[name="description"]`), "Acme's CRM"),
				chromedp.Click(chromedp.CSS(`input[value="dialog.created"]`)),
				chromedp.Click(chromedp.CSS(`input[value="tool.failed"]`)),
				chromedp.Click(chromedp.Search(`//button[text()="Create endpoint"]`)),
				until(`document.querySelector('.alert.once code.new-key') !== null`),
				until(contains("document", "main table td", "dialog.created, tool.failed")),
				until(contains("document", "main table td .description", "Acme's CRM")),
			)
			secret := eval[string](t, ctx, `document.querySelector('.alert.once code.new-key').textContent`)
			if !strings.HasPrefix(secret, "whsec_") {
				t.Fatalf("shown secret %q, want whsec_...", secret)
			}
			screenshot(t, ctx, "admin-webhooks")
			run(t, ctx, "send a test event",
				chromedp.Click(chromedp.Search(`//tr[td/code[text()="https://hooks.acme.example/parley"]]//button[text()="Send test"]`)),
				until(contains("document", "main tr.delivery code", "webhook.test")),
			)
			if tables := eval[string](t, ctx, `Array.from(document.querySelectorAll('main table')).map(t => t.outerHTML).join('')`); strings.Contains(tables, secret) {
				t.Errorf("the endpoint table or the delivery log shows the secret")
			}
			run(t, ctx, "disable",
				chromedp.Click(chromedp.Search(`//tr[td/code[text()="https://hooks.acme.example/parley"]]//button[text()="Disable"]`)),
				until(contains("document", "main table .badge", "disabled")),
				until(contains("document", "main table .disabled-reason", "disabled by")),
			)
		})

		t.Run("the dialog log shows messages, versions and the confirmed tool call", func(t *testing.T) {
			run(t, ctx, "dialogs",
				chromedp.Navigate(base+"/dialogs"),
				until(contains("document", "main table td", "Acme Support")),
			)
			screenshot(t, ctx, "admin-dialogs")
			run(t, ctx, "dialog",
				chromedp.Click(chromedp.CSS(`main table a`)),
				until(contains("document", "h1", dialogID)),
				until(contains("document", ".transcript .turn-text", "please cancel order A1")),
				until(contains("document", ".transcript .tool-name", "cancel_order")),
				until(contains("document", ".transcript details.tool pre", `"/orders/A1/cancel"`)),
				until(contains("document", ".transcript .badge", "v1")),
			)
			screenshot(t, ctx, "admin-dialog")
		})

		t.Run("an operator closes the dialog with a reason", func(t *testing.T) {
			run(t, ctx, "close",
				do(`(() => { document.querySelector('input[name=reason]').value = 'solved by phone';
  document.querySelector('input[name=reason]').closest('form').requestSubmit(); return true; })()`),
				until(contains("document", "main p", "Closed: solved by phone")),
			)
			d, err := w.rt.Dialogs().Get(context.Background(), platform.Operator(), "acme", dialogID, "")
			if err != nil || d.Status != "closed" || d.ClosedReason != "solved by phone" {
				t.Fatalf("after closing in the admin UI: %q %q %v", d.Status, d.ClosedReason, err)
			}
		})

		t.Run("the retention period is set and the dialog deleted from its page", func(t *testing.T) {
			run(t, ctx, "retention",
				chromedp.Navigate(base+"/dialogs"),
				chromedp.WaitVisible(chromedp.CSS(`input[name="retention_days"]`)),
				do(`document.querySelector('input[name="retention_days"]').value = '90'`),
				chromedp.Click(chromedp.Search(`//button[text()="Save retention"]`)),
				until(contains("document", ".alert", "90 days")),
			)
			if tn, err := w.svc.Tenants().Get(context.Background(), platform.Operator(), "acme"); err != nil || tn.RetentionDays != 90 {
				t.Fatalf("tenant %+v %v; want retention_days 90 saved from the form", tn, err)
			}
			run(t, ctx, "delete",
				chromedp.Navigate(base+"/dialogs/"+dialogID),
				until(contains("document", "h1", dialogID)),
				do(`window.confirm = () => true`),
				chromedp.Click(chromedp.Search(`//button[text()="Delete"]`)),
				until(`location.hash.endsWith('/dialogs')`),
			)
			if _, err := w.rt.Dialogs().Get(context.Background(), platform.Operator(), "acme", dialogID, ""); platform.ErrorCode(err) != platform.CodeNotFound {
				t.Fatalf("reading the deleted dialog: %v; want not found", err)
			}
		})

		t.Run("usage lists the dialog's turns", func(t *testing.T) {
			run(t, ctx, "usage",
				chromedp.Navigate(base+"/usage"),
				until(`document.querySelector('main table tbody tr') !== null`),
				until(contains("document", "main thead", "Embedding tokens")),
			)
			screenshot(t, ctx, "admin-usage")
		})

		t.Run("a sign-out that fails says so and leaves the person signed in", func(t *testing.T) {
			w.cutSignOut.Store(true)
			defer w.cutSignOut.Store(false)
			run(t, ctx, "sign out",
				chromedp.Click(chromedp.Search(`//button[text()="Sign out"]`)),
				until(contains("document", ".signout-failed .alert.error[role=alert]", "Signing out failed, so you are still signed in")),
			)
			screenshot(t, ctx, "admin-sign-out-failed")
			if eval[bool](t, ctx, `document.querySelector('main.signin') !== null`) {
				t.Errorf("the sign-in page is shown after a sign-out that failed")
			}
			if got := eval[string](t, ctx, textOf("document", ".who")); got != ownerEmail {
				t.Errorf("the header names %q after a sign-out that failed; want %q", got, ownerEmail)
			}
			if status := eval[int](t, ctx, `fetch('/v1/auth/me').then(r => r.status)`); status != 200 {
				t.Errorf("GET /v1/auth/me after a sign-out that failed answered %d; want 200", status)
			}
		})

		t.Run("signing out ends the session", func(t *testing.T) {
			run(t, ctx, "sign out",
				chromedp.Click(chromedp.Search(`//button[text()="Sign out"]`)),
				chromedp.WaitVisible(chromedp.CSS(`main.signin input[name="email"]`)),
			)
			status := eval[int](t, ctx, `fetch('/v1/auth/me').then(r => r.status)`)
			if status != 401 {
				t.Errorf("GET /v1/auth/me after signing out answered %d; want 401", status)
			}
		})
	})
}

// confirmedCancel makes a dialog through the API whose reply called
// cancel_order after the caller confirmed it, and returns its id.
func (w *world) confirmedCancel(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	c := apiclient.New(w.api.URL, w.adminKey)
	d, err := c.CreateDialog(ctx, "acme", "support", apiclient.CreateDialogRequest{UserID: "u-7"})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := c.SendMessage(ctx, "acme", d.ID, "please cancel order A1")
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.Pending) != 1 {
		t.Fatalf("pending %+v; want the cancel_order call awaiting confirmation", turn.Pending)
	}
	if _, err := c.Confirm(ctx, "acme", d.ID, turn.Pending[0].ID, true); err != nil {
		t.Fatal(err)
	}
	return d.ID
}
