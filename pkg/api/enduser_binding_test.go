package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
)

// TestAWidgetKeyReachesOnlyItsEndUsersDialogs: a pk_ key is public, so a
// caller with it who learns a dialog id must not read or write a signed-in
// user's dialog unless it holds that user's token, nor a visitor's while
// it speaks for a signed-in user.
func TestAWidgetKeyReachesOnlyItsEndUsersDialogs(t *testing.T) {
	t.Parallel()
	const site = "https://shop.example"
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		ctx, op := context.Background(), platform.Operator()
		if _, err := e.svc.Identities().Put(ctx, op, "shop", platform.IdentityInput{Secret: shopIdentitySecret, Audience: "shop.example"}); err != nil {
			t.Fatal(err)
		}
		pk, err := e.svc.APIKeys().Create(ctx, op, "shop", platform.APIKeyInput{Name: "widget", Kind: "pk", Bot: "helper", Origins: []string{site}})
		if err != nil {
			t.Fatal(err)
		}
		ada := userToken(t, shopIdentitySecret, jwt.MapClaims{"sub": "ada"})
		bob := userToken(t, shopIdentitySecret, jwt.MapClaims{"sub": "bob"})
		expiredAda := userToken(t, shopIdentitySecret, jwt.MapClaims{"sub": "ada",
			"iat": time.Now().Add(-2 * time.Hour).Unix(), "exp": time.Now().Add(-time.Hour).Unix()})
		create := func(key, token, body string) string {
			t.Helper()
			headers := []string{"Origin", site}
			if token != "" {
				headers = append(headers, "X-Parley-User-Token", token)
			}
			r := e.raw(t, "POST", "/v1/tenants/shop/bots/helper/dialogs", key, body, headers...)
			if r.StatusCode != http.StatusCreated {
				t.Fatalf("create dialog: %d %s", r.StatusCode, r.body)
			}
			var d apiclient.Dialog
			_ = json.Unmarshal([]byte(r.body), &d)
			return d.ID
		}
		adas := create(pk.Key, ada, `{}`)
		visitors := create(pk.Key, "", `{}`)
		servers := create(e.key, "", `{"user_id":"crm-1"}`)

		cases := []struct {
			name, dialog, key, token string
			want                     int
		}{
			{"the signed-in user's own token reaches her dialog", adas, pk.Key, ada, http.StatusOK},
			{"another user's token does not", adas, pk.Key, bob, http.StatusNotFound},
			{"no token does not", adas, pk.Key, "", http.StatusNotFound},
			{"her expired token is refused", adas, pk.Key, expiredAda, http.StatusUnauthorized},
			{"an anonymous visitor reaches the visitor's dialog", visitors, pk.Key, "", http.StatusOK},
			{"a signed-in user's token does not reach a visitor's dialog", visitors, pk.Key, ada, http.StatusNotFound},
			{"a widget without a token does not reach a dialog the server made for a named user", servers, pk.Key, "", http.StatusNotFound},
			{"a server key reaches every dialog of its tenant", adas, e.key, "", http.StatusOK},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				headers := []string{"Origin", site}
				if tc.token != "" {
					headers = append(headers, "X-Parley-User-Token", tc.token)
				}
				if tc.want == http.StatusOK {
					e.llm.Enqueue(llmtest.ServerReply{Text: "hello"})
				}
				path := "/v1/tenants/shop/dialogs/" + tc.dialog
				for _, req := range []struct{ method, path, body string }{
					{"POST", path + "/messages", `{"text": "show me my orders"}`},
					{"GET", path, ""},
					{"POST", path + "/cancel", `{}`},
				} {
					r := e.raw(t, req.method, req.path, tc.key, req.body, headers...)
					if r.StatusCode != tc.want {
						t.Fatalf("%s %s: %d %s, want %d", req.method, req.path, r.StatusCode, r.body, tc.want)
					}
				}
			})
		}
	})
}

// TestSignedAndAnonymousUsersNeverShareANamespace: a dialog whose user id
// starts with anon_ is an anonymous visitor's, which any pk_ caller with
// its id may reach. A signed token whose sub starts so would make a
// signed-in user's dialog one of those, and so would a server naming such
// a user: both are refused.
func TestSignedAndAnonymousUsersNeverShareANamespace(t *testing.T) {
	const site = "https://shop.example"
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		ctx, op := context.Background(), platform.Operator()
		if _, err := e.svc.Identities().Put(ctx, op, "shop", platform.IdentityInput{Secret: shopIdentitySecret, Audience: "shop.example"}); err != nil {
			t.Fatal(err)
		}
		pk, err := e.svc.APIKeys().Create(ctx, op, "shop", platform.APIKeyInput{Name: "widget", Kind: "pk", Bot: "helper", Origins: []string{site}})
		if err != nil {
			t.Fatal(err)
		}
		const lookalike = "anon_0123456789abcdef01234567"
		token := userToken(t, shopIdentitySecret, jwt.MapClaims{"sub": lookalike})

		t.Run("a token whose sub starts with anon_ is refused", func(t *testing.T) {
			r := e.raw(t, "POST", "/v1/tenants/shop/bots/helper/dialogs", pk.Key, `{}`, "Origin", site, "X-Parley-User-Token", token)
			if r.StatusCode != http.StatusUnauthorized || !strings.Contains(r.body, "anon_") {
				t.Fatalf("create dialog: %d %s; want 401 saying why", r.StatusCode, r.body)
			}
		})
		t.Run("a server key naming an anon_ user is refused at /user_id", func(t *testing.T) {
			r := e.raw(t, "POST", "/v1/tenants/shop/bots/helper/dialogs", e.key, `{"user_id":"`+lookalike+`"}`)
			if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, `"pointer":"/user_id"`) {
				t.Fatalf("create dialog: %d %s; want 422 at /user_id", r.StatusCode, r.body)
			}
		})
		t.Run("no dialog was made that a pk_ key without a token could reach", func(t *testing.T) {
			list := e.raw(t, "GET", "/v1/tenants/shop/dialogs?user_id="+lookalike, e.key, "")
			if strings.Contains(list.body, lookalike) {
				t.Fatalf("dialogs of %s: %s", lookalike, list.body)
			}
		})
	})
}

// TestATokenWhoseSubNoDatabaseCanHoldIsRefused: a validly signed token
// may carry a sub with NUL, which PostgreSQL refuses in text and SQLite
// stores. Both answer 401 pointing at the token, never a 500.
func TestATokenWhoseSubNoDatabaseCanHoldIsRefused(t *testing.T) {
	const site = "https://shop.example"
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		ctx, op := context.Background(), platform.Operator()
		if _, err := e.svc.Identities().Put(ctx, op, "shop", platform.IdentityInput{Secret: shopIdentitySecret, Audience: "shop.example"}); err != nil {
			t.Fatal(err)
		}
		pk, err := e.svc.APIKeys().Create(ctx, op, "shop", platform.APIKeyInput{Name: "widget", Kind: "pk", Bot: "helper", Origins: []string{site}})
		if err != nil {
			t.Fatal(err)
		}
		token := userToken(t, shopIdentitySecret, jwt.MapClaims{"sub": "ada\x00lovelace"})
		r := e.raw(t, "POST", "/v1/tenants/shop/bots/helper/dialogs", pk.Key, `{}`, "Origin", site, "X-Parley-User-Token", token)
		if r.StatusCode != http.StatusUnauthorized || !strings.Contains(r.body, `"pointer":"/user_token"`) {
			t.Fatalf("create dialog: %d %s; want 401 pointing at /user_token", r.StatusCode, r.body)
		}
	})
}
