package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// signIn logs in as the owner of slug and returns the session cookie.
func signIn(t *testing.T, e *env, slug string) *http.Cookie {
	t.Helper()
	resp := e.raw(t, "POST", "/v1/auth/login", "", `{"email": "owner@`+slug+`.test", "password": "member-password"}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login: %d %s", resp.StatusCode, resp.body)
	}
	for _, c := range resp.Cookies() {
		if c.Name == "parley_session" {
			return c
		}
	}
	t.Fatalf("login set no session cookie; headers %v", resp.Header)
	return nil
}

func TestLoginSetsAnHttpOnlySecureStrictCookieAndNoTokenInTheBody(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.OpenSQLite(t))
	e.mustCreateTenant(t, "acme")
	resp := e.raw(t, "POST", "/v1/auth/login", "", `{"email": "owner@acme.test", "password": "member-password"}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login: %d %s", resp.StatusCode, resp.body)
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "parley_session" {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatal("no session cookie")
	}
	if !cookie.HttpOnly || !cookie.Secure || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/" {
		t.Errorf("cookie %+v, want HttpOnly, Secure, SameSite=Strict, Path=/", cookie)
	}
	if strings.Contains(resp.body, cookie.Value) {
		t.Errorf("the login body carries the session token: %s", resp.body)
	}
	var me apiclient.Me
	if err := json.Unmarshal([]byte(resp.body), &me); err != nil {
		t.Fatal(err)
	}
	if me.Kind != "session" || me.User == nil || me.User.Email != "owner@acme.test" ||
		len(me.Memberships) != 1 || me.Memberships[0].Role != "owner" || me.Memberships[0].Tenant.Slug != "acme" {
		t.Errorf("login answered %+v, want the owner's session with its membership", me)
	}

	wrong := e.raw(t, "POST", "/v1/auth/login", "", `{"email": "owner@acme.test", "password": "wrong-password"}`)
	if wrong.StatusCode != http.StatusUnauthorized || len(wrong.Cookies()) != 0 {
		t.Errorf("wrong password: %d with cookies %v, want 401 and none", wrong.StatusCode, wrong.Cookies())
	}
}

func TestCookieRequestsThatChangeThingsMustProveTheyComeFromOurPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.OpenSQLite(t))
	e.mustCreateTenant(t, "acme")
	cookie := "parley_session=" + signIn(t, e, "acme").Value
	host := strings.TrimPrefix(e.srv.URL, "http://")
	body := `{"value": "v"}`
	cases := []struct {
		name    string
		method  string
		headers []string
		status  int
	}{
		{"a read needs no proof", "GET", []string{"Cookie", cookie}, 200},
		{"a write with neither header nor origin is refused", "PUT", []string{"Cookie", cookie}, 403},
		{"a write from another site is refused", "PUT", []string{"Cookie", cookie, "Origin", "https://evil.example"}, 403},
		{"a write with an opaque origin is refused", "PUT", []string{"Cookie", cookie, "Origin", "null"}, 403},
		{"a write from our own origin is allowed", "PUT", []string{"Cookie", cookie, "Origin", "http://" + host}, 200},
		{"a write with the custom header is allowed", "PUT", []string{"Cookie", cookie, apiclient.HeaderCSRF, "1"}, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := ""
			if tc.method == "PUT" {
				b = body
			}
			path := "/v1/tenants/acme/secrets/token"
			if tc.method == "GET" {
				path = "/v1/tenants/acme/secrets"
			}
			resp := e.raw(t, tc.method, path, "", b, tc.headers...)
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d; body %s", resp.StatusCode, tc.status, resp.body)
			}
		})
	}
}

func TestLogoutEndsTheSessionAndClearsTheCookie(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.OpenSQLite(t))
	e.mustCreateTenant(t, "acme")
	cookie := "parley_session=" + signIn(t, e, "acme").Value
	if me := e.raw(t, "GET", "/v1/auth/me", "", "", "Cookie", cookie); me.StatusCode != 200 {
		t.Fatalf("me before logout: %d", me.StatusCode)
	}
	out := e.raw(t, "POST", "/v1/auth/logout", "", "", "Cookie", cookie, apiclient.HeaderCSRF, "1")
	if out.StatusCode != http.StatusNoContent {
		t.Fatalf("logout: %d %s", out.StatusCode, out.body)
	}
	cleared := false
	for _, c := range out.Cookies() {
		cleared = cleared || (c.Name == "parley_session" && c.MaxAge < 0)
	}
	if !cleared {
		t.Errorf("logout did not clear the cookie: %v", out.Header.Values("Set-Cookie"))
	}
	if me := e.raw(t, "GET", "/v1/auth/me", "", "", "Cookie", cookie); me.StatusCode != http.StatusUnauthorized {
		t.Errorf("me with the old cookie after logout: %d, want 401", me.StatusCode)
	}
}

// A browser that reloads while its sign-out is on the way drops the
// request; the server must still end the session, or the person who
// signed out stays signed in.
func TestLogoutWhoseCallerWentAwayStillEndsTheSession(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		e.mustCreateTenant(t, "acme")
		cookie := "parley_session=" + signIn(t, e, "acme").Value
		gone, cancel := context.WithCancel(context.Background())
		cancel()
		req := httptest.NewRequestWithContext(gone, "POST", "/v1/auth/logout", nil)
		req.Header.Set("Cookie", cookie)
		req.Header.Set(apiclient.HeaderCSRF, "1")
		e.h.ServeHTTP(httptest.NewRecorder(), req)
		if me := e.raw(t, "GET", "/v1/auth/me", "", "", "Cookie", cookie); me.StatusCode != http.StatusUnauthorized {
			t.Errorf("me with the cookie of a sign-out whose caller went away: %d, want 401", me.StatusCode)
		}
	})
}

func TestAPublishableKeyWorksOnlyFromItsOrigins(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.OpenSQLite(t))
	e.mustCreateTenant(t, "acme")
	ctx := context.Background()
	if _, _, err := e.svc.Bots().Create(ctx, platform.Operator(), "acme", "helper", botConfig(t)); err != nil {
		t.Fatal(err)
	}
	pk, err := e.svc.APIKeys().Create(ctx, platform.Operator(), "acme", platform.APIKeyInput{
		Name: "widget", Kind: "pk", Bot: "helper", Origins: []string{"https://shop.example"}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, origin string
		status       int
	}{
		{"from an allowed origin it is who it says", "https://shop.example", 200},
		{"from any other origin it is refused", "https://evil.example", 403},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := e.raw(t, "GET", "/v1/auth/me", pk.Key, "", "Origin", tc.origin).StatusCode; got != tc.status {
				t.Errorf("status %d, want %d", got, tc.status)
			}
		})
	}
}
