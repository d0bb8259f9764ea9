package webtest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/parleyhq/parley/pkg/api"
	"github.com/parleyhq/parley/pkg/api/oidctest"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/dialog/dialogtest"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
	"github.com/parleyhq/parley/web"
	"github.com/prometheus/client_golang/prometheus"
)

// ssoServer is the admin UI on a server whose outbound policy reaches a
// real oidc-provider on loopback, set up as tenant acme's provider; ada
// is an editor of acme, and the provider vouches for her email.
func ssoServer(t *testing.T, st *store.Store) (*httptest.Server, string) {
	t.Helper()
	policy := &outbound.Policy{}
	svc := platformtest.New(t, st, platform.Options{OutboundPolicy: policy})
	reg := prometheus.NewRegistry()
	rt := dialogtest.New(t, dialog.Options{Service: svc, Store: st, Provider: llmtest.NewScripted(llmtest.Text("ok")),
		DefaultModel: "gpt-4o-mini", Metrics: reg})
	h, err := api.New(api.Options{Platform: svc, Runtime: rt, Logger: slog.New(slog.DiscardHandler), Metrics: reg, Web: web.Files()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	prov := oidctest.Start(t, oidctest.Options{ClientID: "parley", ClientSecret: "a-client-secret-for-tests",
		RedirectURIs: []string{srv.URL + "/v1/auth/oidc/callback"},
		Accounts: map[string]oidctest.Account{
			"ada":       {Email: "ada@acme.test", EmailVerified: true},
			"unchecked": {Email: "unchecked@acme.test", EmailVerified: false},
		}})
	u, _ := url.Parse(prov.Issuer)
	port, _ := strconv.Atoi(u.Port())
	*policy = outbound.Policy{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, ExtraPorts: []int{port}}

	ctx, op := context.Background(), platform.Operator()
	if _, _, err := svc.Tenants().Create(ctx, op, platform.CreateTenantInput{Slug: "acme", Name: "Acme Outdoor",
		OwnerEmail: ownerEmail, OwnerPassword: ownerPassword}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Users().Create(ctx, op, "ada@acme.test", ownerPassword); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Members().Add(ctx, op, "acme", "ada@acme.test", "editor"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SingleSignOn().PutSSO(ctx, op, "acme", platform.SSOInput{Issuer: prov.Issuer, ClientID: "parley",
		ClientSecret: "a-client-secret-for-tests"}); err != nil {
		t.Fatal(err)
	}
	return srv, prov.Issuer
}

// atTheProvider signs login in on oidc-provider's own login and consent
// pages, as a person would.
func atTheProvider(login string) chromedp.Action[chromedp.Void] {
	return steps(
		chromedp.WaitVisible(chromedp.CSS(`input[name="login"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="login"]`), login),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), "any password"),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.Search(`//button[normalize-space()="Continue"]`)),
		chromedp.Click(chromedp.Search(`//button[normalize-space()="Continue"]`)),
	)
}

// arrived waits for a JavaScript expression to be truthy on a page the
// browser is still being redirected to: an evaluation the navigation cuts
// off is tried again (until's polling gives up on it).
func arrived(expr string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tgt *chromedp.Target) (chromedp.Void, error) {
		deadline := time.Now().Add(waitLimit)
		for {
			ok, err := chromedp.Evaluate[bool](expr)(ctx, tgt)
			if err == nil && ok {
				return chromedp.Void{}, nil
			}
			if time.Now().After(deadline) {
				return chromedp.Void{}, fmt.Errorf("%s never held (last error: %v)", expr, err)
			}
			select {
			case <-ctx.Done():
				return chromedp.Void{}, ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

// TestSignInWithSSOThroughARealProvider: a member signs in to the admin UI
// with "Sign in with SSO", on the provider's own pages; someone whose email
// the provider has not verified reads why they were refused.
func TestSignInWithSSOThroughARealProvider(t *testing.T) {
	t.Parallel()
	b := browser(t)
	st := storetest.OpenSQLite(t)
	srv, issuer := ssoServer(t, st)
	ctx := tab(t, b)
	startSSO := steps(
		chromedp.Navigate(srv.URL+"/admin/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name="sso_tenant"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="sso_tenant"]`), "acme"),
		chromedp.Click(chromedp.Search(`//button[text()="Sign in with SSO"]`)),
	)
	t.Run("a member signs in through the tenant's provider and lands in the admin UI", func(t *testing.T) {
		run(t, ctx, "sso", startSSO, atTheProvider("ada"),
			arrived(contains("document", ".who", "ada@acme.test")),
			until(contains("document", "nav a", "Bots")),
		)
		screenshot(t, ctx, "admin-sso-signed-in")
		run(t, ctx, "her sessions",
			chromedp.Click(chromedp.CSS(`a.who`)),
			until(contains("document", "tr[data-session]", "single sign-on")),
			until(contains("document", "tr[data-session] .badge", "this browser")),
		)
		screenshot(t, ctx, "admin-account-sessions")
		run(t, ctx, "sign out",
			chromedp.Click(chromedp.Search(`//button[text()="Sign out"]`)),
			chromedp.WaitVisible(chromedp.CSS(`main.signin input[name="sso_tenant"]`)),
		)
	})
	t.Run("an email the provider has not verified gets a page saying so", func(t *testing.T) {
		// The provider remembers ada's sign-in in its own cookies:
		// forget it, so its login page asks again.
		forget := chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
			_, err := cdp.Call(ctx, tgt, network.ClearBrowserCookies, cdp.Empty{})
			return err
		})
		run(t, ctx, "sso refused", forget, startSSO, atTheProvider("unchecked"),
			arrived(contains("document", "#sso-error", "has not verified the email address unchecked@acme.test")),
		)
		screenshot(t, ctx, "admin-sso-refused")
	})
	t.Run("the owner sets up just-in-time membership and require SSO on the Members page", func(t *testing.T) {
		run(t, ctx, "owner signs in",
			chromedp.Navigate(srv.URL+"/admin/"),
			chromedp.WaitVisible(chromedp.CSS(`input[name="email"]`)),
			chromedp.SendKeys(chromedp.CSS(`input[name="email"]`), ownerEmail),
			chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), ownerPassword),
			chromedp.Click(chromedp.CSS(`form:has(input[name="email"]) button[type="submit"]`)),
			until(contains("document", ".who", ownerEmail)),
			chromedp.Navigate(srv.URL+"/admin/#/t/acme/members"),
			until(contains("document", ".sso-state", "Provider "+issuer)),
			until(`document.querySelector('.sso-form input[name="issuer"]').value === `+js(issuer)),
			chromedp.SetValue(chromedp.CSS(`.sso-form select[name="default_role"]`), "viewer"),
			chromedp.SendKeys(chromedp.CSS(`.sso-form input[name="allowed_domains"]`), "acme.test"),
			chromedp.Click(chromedp.Search(`//form[contains(@class,"sso-form")]//button[text()="Save"]`)),
			until(contains("document", ".alert.ok", "Saved the single sign-on settings")),
			until(contains("document", ".sso-state", "new people from acme.test join as viewer")),
			until(contains("document", ".sso-state", "with a secret")),
		)
		screenshot(t, ctx, "admin-sso-settings")
		run(t, ctx, "require SSO from a password session",
			chromedp.Click(chromedp.CSS(`.sso-form input[name="require_sso"]`)),
			chromedp.Click(chromedp.Search(`//form[contains(@class,"sso-form")]//button[text()="Save"]`)),
			until(contains("document", ".alert.error", "sign in through the tenant's provider first")),
		)
	})
}
