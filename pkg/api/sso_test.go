package api_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/parleyhq/parley/pkg/api"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/api/oidctest"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// ssoWorld is a Parley server and oidc-provider that know each other: the
// provider's client redirects to the server's callback, and the server's
// outbound policy lets it reach the provider on loopback.
type ssoWorld struct {
	*env
	policy *outbound.Policy
	issuer string
}

const ssoClientSecret = "a-client-secret-for-tests"

func newSSOWorld(t *testing.T, st *store.Store) *ssoWorld {
	t.Helper()
	policy := &outbound.Policy{}
	e := newEnvWithPlatform(t, st, func(o *platform.Options) {
		o.OutboundPolicy = policy
	}, func(o *api.Options) { o.LoginLimit = &generousLogins })
	prov := oidctest.Start(t, oidctest.Options{ClientID: "parley", ClientSecret: ssoClientSecret,
		RedirectURIs: []string{e.srv.URL + "/v1/auth/oidc/callback"},
		Accounts: map[string]oidctest.Account{
			"ada":       {Email: "ada@acme.test", EmailVerified: true},
			"grace":     {Email: "grace@acme.test", EmailVerified: true},
			"mallory":   {Email: "mallory@elsewhere.test", EmailVerified: true},
			"unchecked": {Email: "unchecked@acme.test", EmailVerified: false},
		}})
	allowLoopback(t, policy, prov.Issuer)
	return &ssoWorld{env: e, policy: policy, issuer: prov.Issuer}
}

// allowLoopback lets the server's outbound policy reach issuer, a
// 127.0.0.1 address: what an operator does with PARLEY_OUTBOUND_ALLOW and
// PARLEY_OUTBOUND_PORTS for an in-house provider.
func allowLoopback(t *testing.T, policy *outbound.Policy, issuer string) {
	t.Helper()
	u, _ := url.Parse(issuer)
	port, _ := strconv.Atoi(u.Port())
	policy.AllowCIDRs = append(policy.AllowCIDRs, netip.MustParsePrefix("127.0.0.0/8"))
	policy.ExtraPorts = append(policy.ExtraPorts, port)
}

// putSSO sets tenant's provider to the world's oidc-provider.
func (w *ssoWorld) putSSO(t *testing.T, tenant string, req apiclient.PutSSORequest) {
	t.Helper()
	req.Issuer, req.ClientID, req.ClientSecret = w.issuer, "parley", ssoClientSecret
	if _, err := w.client(testPlatformToken).PutSSO(context.Background(), tenant, req); err != nil {
		t.Fatalf("put sso: %v", err)
	}
}

// startSSO asks the server to start a sign-in: the provider URL it
// redirects to and the state cookie it sets.
func startSSO(t *testing.T, e *env, tenant string) (*url.URL, *http.Cookie) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(e.srv.URL + "/v1/auth/oidc/login?tenant=" + tenant)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("sso login: %d %s\n%s", resp.StatusCode, body, e.logs.String())
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ck := range resp.Cookies() {
		if ck.Name == "parley_oidc_state" {
			if !ck.HttpOnly || !ck.Secure || ck.SameSite != http.SameSiteLaxMode {
				t.Errorf("state cookie %+v, want HttpOnly, Secure, SameSite=Lax", ck)
			}
			return loc, ck
		}
	}
	t.Fatal("sso login set no state cookie")
	return nil, nil
}

var (
	formAction  = regexp.MustCompile(`<form[^>]*action="([^"]+)"`)
	hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)"`)
)

// atProvider signs login in at oidc-provider's own login and consent
// pages, as a browser would, and returns the callback URL it sends the
// browser back to.
func (w *ssoWorld) atProvider(t *testing.T, authURL *url.URL, login string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	var callback string
	c := &http.Client{Jar: jar, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(r.URL.String(), w.srv.URL) {
			callback = r.URL.String()
			return http.ErrUseLastResponse
		}
		return nil
	}}
	resp, err := c.Get(authURL.String())
	for range 5 {
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if callback != "" {
			return callback
		}
		m := formAction.FindSubmatch(body)
		if resp.StatusCode != http.StatusOK || m == nil {
			t.Fatalf("the provider answered %d without a form: %s", resp.StatusCode, body)
		}
		action, _ := url.Parse(string(m[1]))
		form := url.Values{}
		for _, h := range hiddenInput.FindAllSubmatch(body, -1) {
			form.Set(string(h[1]), string(h[2]))
		}
		if strings.Contains(string(body), `name="login"`) {
			form.Set("login", login)
			form.Set("password", "any password")
		}
		resp, err = c.PostForm(resp.Request.URL.ResolveReference(action).String(), form)
	}
	t.Fatal("the provider never sent the browser back")
	return ""
}

// callback brings the provider's answer to the server with the browser's
// state cookie, as JSON errors (no Accept: text/html).
func callback(t *testing.T, callbackURL string, state *http.Cookie) (int, string, *http.Cookie) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, callbackURL, nil)
	if state != nil {
		req.AddCookie(&http.Cookie{Name: state.Name, Value: state.Value})
	}
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var session *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == "parley_session" {
			session = ck
		}
	}
	if resp.StatusCode == http.StatusFound && resp.Header.Get("Location") != "/admin/" {
		t.Errorf("signed in, the browser goes to %q, want /admin/", resp.Header.Get("Location"))
	}
	return resp.StatusCode, string(body), session
}

// ssoSignIn runs a whole sign-in of login through tenant's provider.
func (w *ssoWorld) ssoSignIn(t *testing.T, tenant, login string) (int, string, *http.Cookie) {
	t.Helper()
	authURL, state := startSSO(t, w.env, tenant)
	return callback(t, w.atProvider(t, authURL, login), state)
}

func mustMe(t *testing.T, e *env, session *http.Cookie) *apiclient.Me {
	t.Helper()
	if session == nil {
		t.Fatal("no session cookie")
	}
	me, err := e.client(session.Value).Me(context.Background())
	if err != nil {
		t.Fatalf("me: %v", err)
	}
	return me
}

func tenantsOf(me *apiclient.Me) []string {
	var out []string
	for _, m := range me.Memberships {
		out = append(out, m.Tenant.Slug+":"+m.Role)
	}
	return out
}

func TestSingleSignOnThroughARealProvider(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		w := newSSOWorld(t, st)
		ctx, op := context.Background(), platform.Operator()
		w.mustCreateTenant(t, "acme")
		w.mustCreateTenant(t, "other")
		if _, err := w.svc.Users().Create(ctx, op, "ada@acme.test", "member-password"); err != nil {
			t.Fatal(err)
		}
		for _, tenant := range []string{"acme", "other"} {
			if _, err := w.svc.Members().Add(ctx, op, tenant, "ada@acme.test", "editor"); err != nil {
				t.Fatal(err)
			}
		}
		w.putSSO(t, "acme", apiclient.PutSSORequest{})

		t.Run("a member with a verified email signs in, for the tenant whose provider vouched only", func(t *testing.T) {
			status, body, session := w.ssoSignIn(t, "acme", "ada")
			if status != http.StatusFound {
				t.Fatalf("callback: %d %s", status, body)
			}
			me := mustMe(t, w.env, session)
			if me.User == nil || me.User.Email != "ada@acme.test" {
				t.Fatalf("signed in as %+v", me.User)
			}
			if got := tenantsOf(me); len(got) != 1 || got[0] != "acme:editor" {
				t.Errorf("the session acts in %v, want only acme:editor (acme's provider vouches for nobody in other)", got)
			}
		})

		t.Run("someone who is not a member is refused when the tenant admits nobody just in time", func(t *testing.T) {
			status, body, session := w.ssoSignIn(t, "acme", "grace")
			if status != http.StatusForbidden || !strings.Contains(body, "not a member") || session != nil {
				t.Fatalf("callback: %d %s", status, body)
			}
		})

		t.Run("just-in-time membership admits an allowed domain with the default role, audited", func(t *testing.T) {
			w.putSSO(t, "acme", apiclient.PutSSORequest{DefaultRole: "viewer", AllowedDomains: []string{"acme.test"}})
			status, body, session := w.ssoSignIn(t, "acme", "grace")
			if status != http.StatusFound {
				t.Fatalf("callback: %d %s", status, body)
			}
			if got := tenantsOf(mustMe(t, w.env, session)); len(got) != 1 || got[0] != "acme:viewer" {
				t.Errorf("grace is %v, want acme:viewer", got)
			}
			log, err := w.client(testPlatformToken).AuditLog(ctx, "acme", apiclient.AuditQuery{Action: platform.AuditMemberAdded})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, e := range log.Entries {
				found = found || (e.Target == "grace@acme.test" && strings.Contains(string(e.Detail), `"via":"sso"`))
			}
			if !found {
				t.Errorf("no member.added entry for grace via sso in %+v", log.Entries)
			}
		})

		t.Run("the settings go over the wire with exactly their fields, never the secret", func(t *testing.T) {
			var got apiclient.SSO
			body := w.strictGet(t, "/v1/tenants/acme/sso", testPlatformToken, &got)
			wantKeys(t, body, []string{"issuer", "client_id", "has_secret", "default_role", "allowed_domains", "require_sso", "updated_at"})
			if !got.HasSecret || strings.Contains(body, ssoClientSecret) {
				t.Errorf("GET sso = %s: want has_secret and no secret", body)
			}
		})

		t.Run("a domain just-in-time membership does not admit is refused", func(t *testing.T) {
			status, body, _ := w.ssoSignIn(t, "acme", "mallory")
			if status != http.StatusForbidden || !strings.Contains(body, "mallory@elsewhere.test is not a member") {
				t.Fatalf("callback: %d %s", status, body)
			}
		})

		t.Run("an email the provider has not verified is refused", func(t *testing.T) {
			status, body, session := w.ssoSignIn(t, "acme", "unchecked")
			if status != http.StatusForbidden || !strings.Contains(body, "not verified the email address unchecked@acme.test") || session != nil {
				t.Fatalf("callback: %d %s", status, body)
			}
		})

		t.Run("a callback replayed with the same state and code is refused", func(t *testing.T) {
			authURL, state := startSSO(t, w.env, "acme")
			cb := w.atProvider(t, authURL, "ada")
			if status, body, _ := callback(t, cb, state); status != http.StatusFound {
				t.Fatalf("first callback: %d %s", status, body)
			}
			status, body, session := callback(t, cb, state)
			if status != http.StatusUnauthorized || !strings.Contains(body, "already used") || session != nil {
				t.Fatalf("replayed callback: %d %s", status, body)
			}
		})

		t.Run("a callback whose state is not the browser's is refused", func(t *testing.T) {
			authURL, _ := startSSO(t, w.env, "acme")
			_, otherState := startSSO(t, w.env, "acme")
			cb := w.atProvider(t, authURL, "ada")
			status, body, session := callback(t, cb, otherState)
			if status != http.StatusUnauthorized || !strings.Contains(body, "state mismatch") || session != nil {
				t.Fatalf("callback with another browser's state: %d %s", status, body)
			}
			status, body, _ = callback(t, cb, nil)
			if status != http.StatusUnauthorized || !strings.Contains(body, "state mismatch") {
				t.Fatalf("callback without the state cookie: %d %s", status, body)
			}
		})

		t.Run("a browser gets a page saying why", func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, w.srv.URL+"/v1/auth/oidc/callback?state=x&code=y", nil)
			req.Header.Set("Accept", "text/html")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("Content-Type"), "text/html") ||
				!strings.Contains(string(body), "state mismatch") || !strings.Contains(string(body), `href="/admin/"`) {
				t.Fatalf("error page: %d %s", resp.StatusCode, body)
			}
		})

		t.Run("require SSO closes password sign-in to members, except an owner's break-glass", func(t *testing.T) {
			w.putSSO(t, "acme", apiclient.PutSSORequest{RequireSSO: true})
			resp := w.raw(t, "POST", "/v1/auth/login", "", `{"email": "owner@acme.test", "password": "member-password"}`)
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(resp.body, "requires single sign-on") {
				t.Fatalf("password sign-in of acme's owner: %d %s", resp.StatusCode, resp.body)
			}
			// ada is in other too: her password still signs her in there,
			// not in acme.
			resp = w.raw(t, "POST", "/v1/auth/login", "", `{"email": "ada@acme.test", "password": "member-password"}`)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("password sign-in of ada: %d %s", resp.StatusCode, resp.body)
			}
			var me apiclient.Me
			_ = json.Unmarshal([]byte(resp.body), &me)
			if got := tenantsOf(&me); len(got) != 1 || got[0] != "other:editor" {
				t.Errorf("ada's password session acts in %v, want only other:editor", got)
			}
			if _, err := w.svc.SingleSignOn().BreakGlass(ctx, op, "acme", "ada@acme.test"); platform.ErrorCode(err) != platform.CodeForbidden {
				t.Errorf("break-glass for an editor: %v, want forbidden", err)
			}
			if _, err := w.svc.SingleSignOn().BreakGlass(ctx, op, "acme", "owner@acme.test"); err != nil {
				t.Fatal(err)
			}
			resp = w.raw(t, "POST", "/v1/auth/login", "", `{"email": "owner@acme.test", "password": "member-password"}`)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("password sign-in of acme's owner after break-glass: %d %s", resp.StatusCode, resp.body)
			}
			_ = json.Unmarshal([]byte(resp.body), &me)
			if got := tenantsOf(&me); len(got) != 1 || got[0] != "acme:owner" {
				t.Errorf("the owner's break-glass session acts in %v, want acme:owner", got)
			}
		})

		t.Run("an issuer the outbound policy does not allow is refused, saved or not", func(t *testing.T) {
			allowed := *w.policy
			*w.policy = outbound.Policy{}
			defer func() { *w.policy = allowed }()
			_, err := w.client(testPlatformToken).PutSSO(ctx, "other", apiclient.PutSSORequest{Issuer: w.issuer, ClientID: "parley"})
			var ae *apiclient.Error
			if !errors.As(err, &ae) || ae.Code != apiclient.CodeInvalid || len(ae.Details) == 0 || ae.Details[0].Pointer != "/issuer" {
				t.Fatalf("put sso with a loopback issuer: %v", err)
			}
			// acme's provider was saved while loopback was allowed.
			resp := w.raw(t, "GET", "/v1/auth/oidc/login?tenant=acme", "", "")
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(resp.body, "may not be reached") {
				t.Fatalf("sso login to a loopback issuer: %d %s", resp.StatusCode, resp.body)
			}
		})
	})
}

// handBuilt is an OpenID provider the test controls: discovery, its JWKS
// and a token endpoint answering the ID token idToken builds from the
// sign-in's nonce. It runs no login pages: the test goes straight to
// the callback with any code.
type handBuilt struct {
	srv     *httptest.Server
	key     *rsa.PrivateKey
	mu      sync.Mutex
	nonce   string
	idToken func(nonce string) string
}

func newHandBuilt(t *testing.T) *handBuilt {
	t.Helper()
	h := &handBuilt{key: mustRSAKey(t)}
	mux := http.NewServeMux()
	h.srv = httptest.NewServer(mux)
	t.Cleanup(h.srv.Close)
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": h.srv.URL, "authorization_endpoint": h.srv.URL + "/authorize",
			"token_endpoint": h.srv.URL + "/token", "jwks_uri": h.srv.URL + "/jwks", "id_token_signing_alg_values_supported": []string{"RS256"}})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &h.key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		tok := h.idToken(h.nonce)
		h.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "at", "token_type": "Bearer", "expires_in": 60, "id_token": tok})
	})
	return h
}

func mustRSAKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// sign is a compact JWS of claims by key, named k1 like the JWKS's key.
func sign(t *testing.T, key *rsa.PrivateKey, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSingleSignOnRefusesBadIDTokens(t *testing.T) {
	t.Parallel()
	policy := &outbound.Policy{}
	e := newEnvWithPlatform(t, storetest.OpenSQLite(t), func(o *platform.Options) { o.OutboundPolicy = policy },
		func(o *api.Options) { o.LoginLimit = &generousLogins })
	h := newHandBuilt(t)
	allowLoopback(t, policy, h.srv.URL)
	e.mustCreateTenant(t, "acme")
	if _, err := e.client(testPlatformToken).PutSSO(context.Background(), "acme",
		apiclient.PutSSORequest{Issuer: h.srv.URL, ClientID: "parley", ClientSecret: "s"}); err != nil {
		t.Fatal(err)
	}
	forger := mustRSAKey(t)
	claims := func(nonce string) map[string]any {
		now := time.Now()
		return map[string]any{"iss": h.srv.URL, "sub": "owner", "aud": "parley", "nonce": nonce, "iat": now.Unix(),
			"exp": now.Add(5 * time.Minute).Unix(), "email": "owner@acme.test", "email_verified": true}
	}
	with := func(key *rsa.PrivateKey, change func(map[string]any)) func(string) string {
		return func(nonce string) string {
			c := claims(nonce)
			change(c)
			return sign(t, key, c)
		}
	}
	cases := []struct {
		name    string
		idToken func(nonce string) string
		status  int
		want    string
	}{
		{"a token signed by the provider's key signs the owner in", with(h.key, func(map[string]any) {}), http.StatusFound, ""},
		{"a forged signature is refused", with(forger, func(map[string]any) {}), http.StatusUnauthorized, "signature does not verify"},
		{"an expired token is refused", with(h.key, func(c map[string]any) {
			c["iat"], c["exp"] = time.Now().Add(-2*time.Hour).Unix(), time.Now().Add(-time.Hour).Unix()
		}), http.StatusUnauthorized, "expired"},
		{"a token for another client is refused", with(h.key, func(c map[string]any) { c["aud"] = "someone-else" }), http.StatusUnauthorized, "wrong audience"},
		{"a token from another issuer is refused", with(h.key, func(c map[string]any) { c["iss"] = "https://evil.example" }), http.StatusUnauthorized, "issued by another provider"},
		{"a token of another sign-in (nonce) is refused", with(h.key, func(c map[string]any) { c["nonce"] = "stolen" }), http.StatusUnauthorized, "nonce"},
		{"an unverified email is refused", with(h.key, func(c map[string]any) { c["email_verified"] = false }), http.StatusForbidden, "not verified"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			authURL, state := startSSO(t, e, "acme")
			q := authURL.Query()
			if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("nonce") == "" || q.Get("state") != state.Value {
				t.Fatalf("the authorization request lacks PKCE, nonce or state: %s", authURL)
			}
			h.mu.Lock()
			h.nonce, h.idToken = q.Get("nonce"), tc.idToken
			h.mu.Unlock()
			status, body, session := callback(t, e.srv.URL+"/v1/auth/oidc/callback?code=c&state="+url.QueryEscape(state.Value), state)
			if status != tc.status || !strings.Contains(body, tc.want) {
				t.Fatalf("callback: %d %s, want %d with %q", status, body, tc.status, tc.want)
			}
			if (session != nil) != (tc.status == http.StatusFound) {
				t.Errorf("session cookie %v with status %d", session, status)
			}
		})
	}
}
