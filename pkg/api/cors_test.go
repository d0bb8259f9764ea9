package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

const (
	widgetSite = "https://shop.example"
	otherSite  = "https://evil.example"
)

// corsEnv is a tenant with a published bot, a pk_ key for widgetSite and its
// admin key.
func corsEnv(t *testing.T) (e *env, pk, sk string) {
	t.Helper()
	e = newEnv(t, storetest.OpenSQLite(t))
	sk = e.mustCreateTenant(t, "acme")
	ctx, op := context.Background(), platform.Operator()
	if _, _, err := e.svc.Bots().Create(ctx, op, "acme", "support", botConfig(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Versions().Publish(ctx, op, "acme", "support", 1); err != nil {
		t.Fatal(err)
	}
	k, err := e.svc.APIKeys().Create(ctx, op, "acme", platform.APIKeyInput{Name: "widget", Kind: "pk", Bot: "support", Origins: []string{widgetSite}})
	if err != nil {
		t.Fatal(err)
	}
	return e, k.Key, sk
}

func TestPreflightsAreAnsweredForTheChatRoutesOnly(t *testing.T) {
	t.Parallel()
	e, _, _ := corsEnv(t)
	cases := []struct {
		name, method, path string
		answered           bool
	}{
		{"starting a dialog may be preflighted", "POST", "/v1/tenants/acme/bots/support/dialogs", true},
		{"reading a dialog may be preflighted", "GET", "/v1/tenants/acme/dialogs/d1", true},
		{"posting a message may be preflighted", "POST", "/v1/tenants/acme/dialogs/d1/messages", true},
		{"posting tool results may be preflighted", "POST", "/v1/tenants/acme/dialogs/d1/tool-results", true},
		{"posting a confirmation may be preflighted", "POST", "/v1/tenants/acme/dialogs/d1/confirmations", true},
		{"rating a reply may be preflighted", "POST", "/v1/tenants/acme/dialogs/d1/messages/m1/feedback", true},
		{"another route under a message is not for other sites", "POST", "/v1/tenants/acme/dialogs/d1/messages/m1/other", false},
		{"following a dialog live may be preflighted", "GET", "/v1/tenants/acme/dialogs/d1/events", true},
		{"taking a dialog as an operator is not for other sites", "POST", "/v1/tenants/acme/dialogs/d1/assign", false},
		{"creating an API key is not for other sites", "POST", "/v1/tenants/acme/api-keys", false},
		{"listing dialogs is not for other sites", "GET", "/v1/tenants/acme/dialogs", false},
		{"saving a version is not for other sites", "POST", "/v1/tenants/acme/bots/support/versions", false},
		{"signing in is not for other sites", "POST", "/v1/auth/login", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.raw(t, "OPTIONS", tc.path, "", "", "Origin", otherSite,
				"Access-Control-Request-Method", tc.method,
				"Access-Control-Request-Headers", "authorization, content-type, idempotency-key")
			if r.Header.Get("Access-Control-Allow-Credentials") != "" {
				t.Errorf("preflight allows credentials; it never may")
			}
			got := r.Header.Get("Access-Control-Allow-Origin")
			if !tc.answered {
				if got != "" || r.StatusCode == http.StatusNoContent {
					t.Errorf("preflight answered %d with Allow-Origin %q; want no CORS grant", r.StatusCode, got)
				}
				return
			}
			if r.StatusCode != http.StatusNoContent || got != otherSite {
				t.Fatalf("preflight answered %d with Allow-Origin %q; want 204 for %s", r.StatusCode, got, otherSite)
			}
			if m := r.Header.Get("Access-Control-Allow-Methods"); !strings.Contains(m, tc.method) {
				t.Errorf("Allow-Methods %q lacks %s", m, tc.method)
			}
			h := strings.ToLower(r.Header.Get("Access-Control-Allow-Headers"))
			for _, want := range []string{"authorization", "content-type", "idempotency-key"} {
				if !strings.Contains(h, want) {
					t.Errorf("Allow-Headers %q lacks %s", h, want)
				}
			}
		})
	}
}

func TestChatAnswersAreReadableOnlyByPagesUsingAPublishableKey(t *testing.T) {
	t.Parallel()
	e, pk, sk := corsEnv(t)
	const start = "/v1/tenants/acme/bots/support/dialogs"
	cases := []struct {
		name, token, origin string
		status              int
		readable            bool
	}{
		{"the widget's own site starts a dialog and reads the answer", pk, widgetSite, http.StatusCreated, true},
		{"another site is refused and can read why", pk, otherSite, http.StatusForbidden, true},
		{"a server key used from a page is not made readable there", sk, otherSite, http.StatusCreated, false},
		{"a request without a key is not made readable", "", widgetSite, http.StatusUnauthorized, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.raw(t, "POST", start, tc.token, `{}`, "Origin", tc.origin)
			if r.StatusCode != tc.status {
				t.Fatalf("status %d (%s); want %d", r.StatusCode, r.body, tc.status)
			}
			if r.Header.Get("Access-Control-Allow-Credentials") != "" {
				t.Errorf("answer allows credentials; it never may")
			}
			got := r.Header.Get("Access-Control-Allow-Origin")
			switch {
			case tc.readable && got != tc.origin:
				t.Errorf("Allow-Origin %q; want %q", got, tc.origin)
			case !tc.readable && got != "":
				t.Errorf("Allow-Origin %q; want none", got)
			}
			if tc.readable && !strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "Retry-After") {
				t.Errorf("Expose-Headers %q lacks Retry-After", r.Header.Get("Access-Control-Expose-Headers"))
			}
			if !strings.Contains(r.Header.Get("Vary"), "Origin") {
				t.Errorf("Vary %q lacks Origin, so a cache could serve one site's grant to another", r.Header.Get("Vary"))
			}
		})
	}
}

func TestAPublishableKeyGetsNoCORSGrantOutsideTheChatRoutes(t *testing.T) {
	t.Parallel()
	e, pk, _ := corsEnv(t)
	r := e.raw(t, "GET", "/v1/tenants/acme/bots", pk, "", "Origin", widgetSite)
	if got := r.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("listing bots with a pk_ key answered Allow-Origin %q; want none", got)
	}
}

// BenchmarkChatPreflight measures the answer to a widget's preflight, sent
// before its first chat call from each page (then cached for Max-Age).
func BenchmarkChatPreflight(b *testing.B) {
	e := newEnv(b, storetest.OpenSQLite(b))
	req := httptest.NewRequest("OPTIONS", "/v1/tenants/acme/dialogs/d1/messages", nil)
	req.Header.Set("Origin", widgetSite)
	req.Header.Set("Access-Control-Request-Method", "POST")
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNoContent {
			b.Fatalf("status %d", rec.Code)
		}
	}
}
