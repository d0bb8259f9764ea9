package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parleyhq/parley/pkg/api"
	"github.com/parleyhq/parley/pkg/api/oidctest"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// newOperatorSSOWorld is a Parley server whose operator's provider
// (PARLEY_OIDC_ISSUER, _CLIENT_ID, _CLIENT_SECRET) is a real
// oidc-provider. The provider must know the server's callback before the
// server knows the provider's issuer, so a front server takes the
// address first and hands requests on once the server exists.
func newOperatorSSOWorld(t *testing.T, st *store.Store) *ssoWorld {
	t.Helper()
	var handler atomic.Value // http.Handler
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handler.Load().(http.Handler).ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	prov := oidctest.Start(t, oidctest.Options{ClientID: "parley-operator", ClientSecret: ssoClientSecret,
		RedirectURIs: []string{front.URL + "/v1/auth/oidc/callback"},
		Accounts: map[string]oidctest.Account{
			"ada":   {Email: "Ada@Acme.test", EmailVerified: true},
			"grace": {Email: "grace@acme.test", EmailVerified: true},
		}})
	policy := &outbound.Policy{}
	allowLoopback(t, policy, prov.Issuer)
	e := newEnvWithPlatform(t, st, func(o *platform.Options) {
		o.OutboundPolicy = policy
		o.OIDC = platform.OIDCProvider{Issuer: prov.Issuer, ClientID: "parley-operator", ClientSecret: ssoClientSecret}
	}, func(o *api.Options) { o.LoginLimit = &generousLogins })
	handler.Store(http.Handler(e.h))
	e.srv = front
	return &ssoWorld{env: e, policy: policy, issuer: prov.Issuer}
}

func TestSingleSignOnThroughTheOperatorsProvider(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		w := newOperatorSSOWorld(t, st)
		ctx, op := context.Background(), platform.Operator()
		w.mustCreateTenant(t, "acme")
		w.mustCreateTenant(t, "other")
		if _, err := w.svc.Users().Create(ctx, op, "ada@acme.test", "member-password"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.Members().Add(ctx, op, "acme", "ada@acme.test", "editor"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.Members().Add(ctx, op, "other", "ada@acme.test", "viewer"); err != nil {
			t.Fatal(err)
		}

		t.Run("a person with an account signs in with no organisation, for every tenant they belong to", func(t *testing.T) {
			status, body, session := w.ssoSignIn(t, "", "ada")
			if status != http.StatusFound {
				t.Fatalf("callback: %d %s\n%s", status, body, w.logs.String())
			}
			me := mustMe(t, w.env, session)
			got := tenantsOf(me)
			slices.Sort(got)
			if me.User.Email != "ada@acme.test" || !slices.Equal(got, []string{"acme:editor", "other:viewer"}) {
				t.Errorf("signed in as %s in %v, want ada in acme and other", me.User.Email, got)
			}
			list, err := w.client(session.Value).ListSessions(ctx)
			if err != nil || len(list.Sessions) != 1 || list.Sessions[0].Via != "sso" || list.Sessions[0].TenantID != "" {
				t.Errorf("sessions %+v, %v; want one via sso for no one tenant", list, err)
			}
		})

		t.Run("someone without an account is refused", func(t *testing.T) {
			status, body, session := w.ssoSignIn(t, "", "grace")
			if status != http.StatusForbidden || !strings.Contains(body, "not a member") || session != nil {
				t.Fatalf("callback: %d %s", status, body)
			}
		})

		t.Run("the provider is not asked for a code, even where two-factor is required", func(t *testing.T) {
			on := true
			if _, err := w.svc.Tenants().Update(ctx, op, "acme", platform.UpdateTenantInput{RequireTwoFactor: &on}); err != nil {
				t.Fatal(err)
			}
			status, body, session := w.ssoSignIn(t, "", "ada")
			if status != http.StatusFound {
				t.Fatalf("callback: %d %s", status, body)
			}
			if got := tenantsOf(mustMe(t, w.env, session)); !slices.Contains(got, "acme:editor") {
				t.Errorf("the sso session acts in %v, want acme too", got)
			}
			// The same person's password alone no longer gets a session.
			in, err := w.svc.Auth().Login(ctx, "ada@acme.test", "member-password")
			if err != nil || in.SecondStep == nil || !in.SecondStep.Enrol {
				t.Errorf("password sign-in: %+v, %v; want to be asked to enrol", in.SecondStep, err)
			}
		})
	})
}
