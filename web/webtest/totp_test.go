package webtest

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"github.com/parleyhq/parley/pkg/api"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/dialog/dialogtest"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
	"github.com/parleyhq/parley/web"
	"github.com/prometheus/client_golang/prometheus"
)

// totpServer is the admin UI on a server whose clock the test moves, so
// authenticator codes of the next 30-second step need no waiting; the
// owner of acme signs in with a password, hashed at bcrypt's cheapest
// cost like every test's (the default costs each sign-in a CPU-bound
// moment that a loaded machine stretches).
func totpServer(t *testing.T, st *store.Store, clock *platformtest.Clock) (*httptest.Server, *platform.Service) {
	t.Helper()
	svc := platformtest.New(t, st, platform.Options{Clock: clock.Now, Passwords: auth.PasswordHasher{Cost: bcrypt.MinCost}})
	reg := prometheus.NewRegistry()
	rt := dialogtest.New(t, dialog.Options{Service: svc, Store: st, Provider: llmtest.NewScripted(llmtest.Text("ok")),
		DefaultModel: "gpt-4o-mini", Metrics: reg})
	generous := api.LoginLimit{EmailBurst: 100, EmailEvery: time.Millisecond, IPBurst: 100, IPEvery: time.Millisecond}
	h, err := api.New(api.Options{Platform: svc, Runtime: rt, Logger: slog.New(slog.DiscardHandler), Metrics: reg, Web: web.Files(),
		LoginLimit: &generous})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	if _, _, err := svc.Tenants().Create(context.Background(), platform.Operator(), platform.CreateTenantInput{Slug: "acme",
		Name: "Acme Outdoor", OwnerEmail: ownerEmail, OwnerPassword: ownerPassword}); err != nil {
		t.Fatal(err)
	}
	return srv, svc
}

// TestTwoFactorEnrolSignInAndReplay: the owner turns two-factor on from
// Your account (typing the shown key into "the app", here Go), saves the
// recovery codes, signs out, signs in with password and code, and is
// refused the same code again with a message that says why.
func TestTwoFactorEnrolSignInAndReplay(t *testing.T) {
	t.Parallel()
	b := browser(t)
	// Replay is refused by the store, on both databases in pkg/platform and
	// pkg/api; the pages run once, on SQLite, as every form does.
	st := storetest.OpenSQLite(t)
	clock := platformtest.NewClock(time.Now().UTC())
	srv, _ := totpServer(t, st, clock)
	ctx := tab(t, b)
	code := func(secret string) string {
		c, err := platform.TOTPCode(secret, clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// The sign-in page's email field: the members page has one too (the
	// invite form), and a sign-out there that took any email field for
	// the sign-in page went on, and reloaded, before the sign-out
	// request had ended the session.
	const signInEmail = `main.signin input[name="email"]`
	password := steps(
		chromedp.Navigate(srv.URL+"/admin/"),
		chromedp.WaitVisible(chromedp.CSS(signInEmail)),
		chromedp.SendKeys(chromedp.CSS(signInEmail), ownerEmail),
		chromedp.SendKeys(chromedp.CSS(`main.signin input[name="password"]`), ownerPassword),
		chromedp.Click(chromedp.CSS(`main.signin form:has(input[name="email"]) button[type="submit"]`)),
	)
	signOut := steps(
		chromedp.Click(chromedp.Search(`//button[text()="Sign out"]`)),
		chromedp.WaitVisible(chromedp.CSS(signInEmail)), // shown once the sign-out request is answered
	)
	run(t, ctx, "sign in with a password", password, until(contains("document", ".who", ownerEmail)))

	var secret string
	t.Run("the owner turns two-factor on and sees the recovery codes once", func(t *testing.T) {
		run(t, ctx, "start",
			chromedp.Navigate(srv.URL+"/admin/#/t/acme/account"),
			chromedp.Click(chromedp.Search(`//button[text()="Turn on two-factor"]`)),
			until(`document.querySelector('code.totp-secret') !== null`),
			until(`document.querySelector('a.totp-uri').href.startsWith('otpauth://totp/')`),
		)
		secret = eval[string](t, ctx, `document.querySelector('code.totp-secret').dataset.secret`)
		run(t, ctx, "a wrong code is refused",
			chromedp.SendKeys(chromedp.CSS(`input[name="totp_code"]`), "000000"),
			chromedp.Click(chromedp.Search(`//button[text()="Turn on"]`)),
			until(contains("document", ".alert.error", "not the authenticator's current code")),
		)
		run(t, ctx, "the right one turns it on",
			chromedp.SetValue(chromedp.CSS(`input[name="totp_code"]`), code(secret)),
			chromedp.Click(chromedp.Search(`//button[text()="Turn on"]`)),
			until(`document.querySelectorAll('ul.recovery-codes li').length === 10`),
		)
		screenshot(t, ctx, "admin-two-factor-recovery-codes")
		run(t, ctx, "saved",
			chromedp.Click(chromedp.Search(`//button[text()="I saved them"]`)),
			until(contains("document", ".totp-state", "10 recovery codes left")),
			until(`document.querySelector('ul.recovery-codes') === null`),
		)
	})

	run(t, ctx, "sign out", signOut)
	clock.Advance(30 * time.Second) // the app shows the next code
	var used string
	t.Run("a password alone is not enough; password and code sign in", func(t *testing.T) {
		used = code(secret)
		run(t, ctx, "second step",
			password,
			chromedp.WaitVisible(chromedp.CSS(`input[name="totp_code"]`)),
			until(`document.querySelector('.signin-forms').hidden`),
			until(`document.querySelector('a.use-recovery') !== null`),
		)
		screenshot(t, ctx, "signin-two-factor")
		run(t, ctx, "code",
			chromedp.SendKeys(chromedp.CSS(`input[name="totp_code"]`), used),
			chromedp.Click(chromedp.Search(`//button[text()="Verify"]`)),
			until(contains("document", ".who", ownerEmail)),
		)
	})

	t.Run("signed in with a code, the owner requires two-factor of acme's members", func(t *testing.T) {
		run(t, ctx, "require",
			chromedp.Navigate(srv.URL+"/admin/#/t/acme/members"),
			chromedp.WaitVisible(chromedp.CSS(`input[name="require_two_factor"]`)),
			chromedp.Click(chromedp.CSS(`input[name="require_two_factor"]`)),
			until(contains("document", ".alert.ok", "Two-factor is required.")),
		)
	})

	run(t, ctx, "sign out again", signOut)
	t.Run("the same code again is refused, saying it was used", func(t *testing.T) {
		run(t, ctx, "replay",
			password,
			chromedp.WaitVisible(chromedp.CSS(`input[name="totp_code"]`)),
			chromedp.SendKeys(chromedp.CSS(`input[name="totp_code"]`), used),
			chromedp.Click(chromedp.Search(`//button[text()="Verify"]`)),
			until(contains("document", ".alert.error", "this code was used already")),
		)
		if got := eval[bool](t, ctx, `document.querySelector('.who') === null`); !got {
			t.Error("signed in with a replayed code")
		}
	})
}

// TestATenantThatRequiresTwoFactorHasMembersEnrolAtSignIn: acme requires
// two-factor; its owner, who has none, signs in with a password and is
// walked through enrolment before the admin UI opens.
func TestATenantThatRequiresTwoFactorHasMembersEnrolAtSignIn(t *testing.T) {
	t.Parallel()
	b := browser(t)
	st := storetest.OpenSQLite(t)
	clock := platformtest.NewClock(time.Now().UTC())
	srv, svc := totpServer(t, st, clock)
	on := true
	if _, err := svc.Tenants().Update(context.Background(), platform.Operator(), "acme", platform.UpdateTenantInput{RequireTwoFactor: &on}); err != nil {
		t.Fatal(err)
	}
	ctx := tab(t, b)
	run(t, ctx, "password",
		chromedp.Navigate(srv.URL+"/admin/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name="email"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="email"]`), ownerEmail),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), ownerPassword),
		chromedp.Click(chromedp.CSS(`form:has(input[name="email"]) button[type="submit"]`)),
		until(contains("document", "h2", "Set up two-factor sign-in")),
		until(`document.querySelector('code.totp-secret') !== null`),
	)
	if got := eval[bool](t, ctx, `document.querySelector('.who') === null`); !got {
		t.Fatal("signed in before enrolling")
	}
	secret := eval[string](t, ctx, `document.querySelector('code.totp-secret').dataset.secret`)
	code, err := platform.TOTPCode(secret, clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "enrol",
		chromedp.SendKeys(chromedp.CSS(`input[name="totp_code"]`), code),
		chromedp.Click(chromedp.Search(`//button[text()="Turn on"]`)),
		until(`document.querySelectorAll('ul.recovery-codes li').length === 10`),
		chromedp.Click(chromedp.Search(`//button[text()="I saved them"]`)),
		until(contains("document", ".who", ownerEmail)),
	)
	screenshot(t, ctx, "signin-two-factor-enrol")
}
