package api_test

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/platform"
)

const (
	shopIdentitySecret  = "shop-identity-secret-0123456789abcdefghij"
	otherIdentitySecret = "other-identity-secret-0123456789abcdefghij"
)

// varsBot declares one context variable of each source.
const varsBot = `{"basic_settings": {"name": "Vars"},
  "context_variables": [
    {"name": "customer_id", "source": "identity"},
    {"name": "tier", "source": "identity", "claim": "plan"},
    {"name": "page_lang", "source": "page"},
    {"name": "internal_note"}
  ],
  "llm": {"model": "gpt-4o-mini"}}`

// userToken signs claims with secret as a tenant's backend would.
func userToken(t *testing.T, secret string, claims jwt.MapClaims) string {
	t.Helper()
	base := jwt.MapClaims{"sub": "user-7", "aud": "shop.example", "customer_id": "cus_7", "plan": "gold",
		"iat": time.Now().Unix(), "exp": time.Now().Add(10 * time.Minute).Unix()}
	for k, v := range claims {
		base[k] = v
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, base).SignedString([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestWhoMaySetWhat drives the source rules of context variables and
// signed user tokens through the real API: a widget (pk_) caller may set
// only page variables, its user is anonymous or the token's sub, and
// identity variables come only from a verified token.
func TestWhoMaySetWhat(t *testing.T) {
	t.Parallel()
	const site = "https://shop.example"
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		ctx, op := context.Background(), platform.Operator()
		if _, _, err := e.svc.Bots().Create(ctx, op, "shop", "vars", []byte(varsBot)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Versions().Publish(ctx, op, "shop", "vars", 1); err != nil {
			t.Fatal(err)
		}
		admin := e.client(e.key)
		if _, err := admin.PutIdentity(ctx, "shop", apiclient.PutIdentityRequest{Secret: shopIdentitySecret, Audience: "shop.example"}); err != nil {
			t.Fatal(err)
		}
		e.mustCreateTenant(t, "other")
		if _, err := e.svc.Identities().Put(ctx, op, "other", platform.IdentityInput{Secret: otherIdentitySecret}); err != nil {
			t.Fatal(err)
		}
		pk, err := e.svc.APIKeys().Create(ctx, op, "shop", platform.APIKeyInput{Name: "widget", Kind: "pk", Bot: "vars", Origins: []string{site}})
		if err != nil {
			t.Fatal(err)
		}
		const path = "/v1/tenants/shop/bots/vars/dialogs"

		tests := []struct {
			name       string
			key        string // "" the widget key
			body       string
			token      string // sent in X-Parley-User-Token
			wantStatus int
			wantText   string            // in the error message or detail
			wantUser   string            // "anon" for a generated id
			wantCtx    map[string]string // the dialog's context
		}{
			{name: "an unsigned visitor is anonymous with a generated id and may set page variables",
				body: `{"context":{"page_lang":"de"}}`, wantStatus: 201, wantUser: "anon", wantCtx: map[string]string{"page_lang": "de"}},
			{name: "a widget caller cannot choose user_id",
				body: `{"user_id":"victim"}`, wantStatus: 403, wantText: "/user_id"},
			{name: "a widget caller cannot set an identity variable",
				body: `{"context":{"customer_id":"cus_victim"}}`, wantStatus: 403, wantText: "customer_id"},
			{name: "a widget caller cannot set an identity variable even with a valid token",
				body: `{"context":{"customer_id":"cus_victim"}}`, token: userToken(t, shopIdentitySecret, nil), wantStatus: 403, wantText: "customer_id"},
			{name: "a widget caller cannot set a server variable",
				body: `{"context":{"internal_note":"vip"}}`, wantStatus: 403, wantText: "internal_note"},
			{name: "a signed token names the user and fills identity variables from its claims",
				body: `{"context":{"page_lang":"fr"}}`, token: userToken(t, shopIdentitySecret, nil), wantStatus: 201,
				wantUser: "user-7", wantCtx: map[string]string{"customer_id": "cus_7", "tier": "gold", "page_lang": "fr"}},
			{name: "the token is also taken from the body's user_token",
				body:       `{"user_token":"` + userToken(t, shopIdentitySecret, jwt.MapClaims{"sub": "user-8", "customer_id": "cus_8"}) + `"}`,
				wantStatus: 201, wantUser: "user-8", wantCtx: map[string]string{"customer_id": "cus_8", "tier": "gold"}},
			{name: "an expired token is refused",
				token:      userToken(t, shopIdentitySecret, jwt.MapClaims{"iat": time.Now().Add(-2 * time.Hour).Unix(), "exp": time.Now().Add(-time.Hour).Unix()}),
				wantStatus: 401, wantText: "expired"},
			{name: "a token signed with another tenant's secret is refused",
				token: userToken(t, otherIdentitySecret, nil), wantStatus: 401, wantText: "signature"},
			{name: "a token for another audience is refused",
				token: userToken(t, shopIdentitySecret, jwt.MapClaims{"aud": "elsewhere"}), wantStatus: 401, wantText: "audience"},
			{name: "a forged token (payload changed) is refused",
				token: forge(userToken(t, shopIdentitySecret, nil)), wantStatus: 401, wantText: "signature"},
			{name: "a server-side caller may set server and identity variables and name the user",
				key: e.key, body: `{"user_id":"crm-1","context":{"internal_note":"vip","customer_id":"cus_1"}}`, wantStatus: 201,
				wantUser: "crm-1", wantCtx: map[string]string{"internal_note": "vip", "customer_id": "cus_1"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				key := cmp.Or(tt.key, pk.Key)
				headers := []string{"Origin", site}
				if tt.token != "" {
					headers = append(headers, "X-Parley-User-Token", tt.token)
				}
				r := e.raw(t, "POST", path, key, cmp.Or(tt.body, "{}"), headers...)
				if r.StatusCode != tt.wantStatus {
					t.Fatalf("status %d, want %d: %s", r.StatusCode, tt.wantStatus, r.body)
				}
				if tt.token != "" && strings.Contains(r.body, tt.token) {
					t.Fatalf("the answer echoes the token: %s", r.body)
				}
				if tt.wantStatus != http.StatusCreated {
					if !strings.Contains(r.body, tt.wantText) {
						t.Fatalf("the error does not name %q: %s", tt.wantText, r.body)
					}
					return
				}
				var d apiclient.Dialog
				if err := json.Unmarshal([]byte(r.body), &d); err != nil {
					t.Fatal(err)
				}
				if tt.wantUser == "anon" && !strings.HasPrefix(d.UserID, dialog.AnonymousPrefix) || tt.wantUser != "anon" && d.UserID != tt.wantUser {
					t.Errorf("user_id %q, want %s", d.UserID, tt.wantUser)
				}
				if got, _ := json.Marshal(d.Context); string(got) != mustJSON(tt.wantCtx) {
					t.Errorf("context %s, want %s", got, mustJSON(tt.wantCtx))
				}
			})
		}

		t.Run("tokens are counted by outcome", func(t *testing.T) {
			m := e.raw(t, "GET", "/metrics", "", "").body
			for _, want := range []string{`parley_user_tokens_total{outcome="accepted"}`, `parley_user_tokens_total{outcome="expired"}`,
				`parley_user_tokens_total{outcome="signature"} 2`, `parley_user_tokens_total{outcome="audience"} 1`} {
				if !strings.Contains(m, want) {
					t.Errorf("metrics lack %s", want)
				}
			}
		})

		t.Run("two anonymous visitors get different ids", func(t *testing.T) {
			var ids []string
			for range 2 {
				r := e.raw(t, "POST", path, pk.Key, `{}`, "Origin", site)
				var d apiclient.Dialog
				_ = json.Unmarshal([]byte(r.body), &d)
				ids = append(ids, d.UserID)
			}
			if ids[0] == ids[1] || ids[0] == "" {
				t.Fatalf("ids %v", ids)
			}
		})
	})
}

// TestIdentitySettings: the secret is write-only, exactly one kind of key
// is accepted, and removing the settings refuses tokens again.
func TestIdentitySettings(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		ctx := context.Background()
		admin := e.client(e.key)
		for _, bad := range []struct {
			name string
			req  apiclient.PutIdentityRequest
			want string
		}{
			{"neither secret nor jwks_url", apiclient.PutIdentityRequest{Audience: "a"}, "exactly one"},
			{"both", apiclient.PutIdentityRequest{Secret: shopIdentitySecret, JWKSURL: "https://idp.example/jwks"}, "exactly one"},
			{"a short secret", apiclient.PutIdentityRequest{Secret: "short"}, "/secret"},
			{"a jwks_url that is not http(s)", apiclient.PutIdentityRequest{JWKSURL: "file:///etc/passwd"}, "/jwks_url"},
		} {
			t.Run("refuses "+bad.name, func(t *testing.T) {
				_, err := admin.PutIdentity(ctx, "shop", bad.req)
				var apiErr *apiclient.Error
				if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnprocessableEntity || !strings.Contains(mustJSON(apiErr), bad.want) {
					t.Fatalf("err = %v, want 422 naming %s", err, bad.want)
				}
			})
		}
		r := e.raw(t, "PUT", "/v1/tenants/shop/identity", e.key, `{"secret":"`+shopIdentitySecret+`","audience":"shop.example"}`)
		if r.StatusCode != http.StatusOK || strings.Contains(r.body, shopIdentitySecret) || !strings.Contains(r.body, `"has_secret":true`) {
			t.Fatalf("put: %d %s", r.StatusCode, r.body)
		}
		got, err := admin.GetIdentity(ctx, "shop")
		if err != nil || !got.HasSecret || got.Audience != "shop.example" {
			t.Fatalf("get: %+v %v", got, err)
		}
		if err := admin.DeleteIdentity(ctx, "shop"); err != nil {
			t.Fatal(err)
		}
		r = e.raw(t, "POST", "/v1/tenants/shop/bots/helper/dialogs", e.key, `{}`, "X-Parley-User-Token", userToken(t, shopIdentitySecret, nil))
		if r.StatusCode != http.StatusUnauthorized || !strings.Contains(r.body, "not_configured") {
			t.Fatalf("a token after the settings were removed: %d %s", r.StatusCode, r.body)
		}
	})
}

// forge swaps the token's payload for one naming another customer,
// keeping the signature.
func forge(token string) string {
	parts := strings.Split(token, ".")
	payload := fmt.Sprintf(`{"sub":"user-7","aud":"shop.example","customer_id":"cus_1","exp":%d}`, time.Now().Add(time.Hour).Unix())
	parts[1] = base64.RawURLEncoding.EncodeToString([]byte(payload))
	return strings.Join(parts, ".")
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
