package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/dialog"
)

// TestBadInputIsAClientErrorOnEveryDatabase sends what a careless client
// or an attacker sends: NUL characters, bytes that are not UTF-8, ids no
// store could hold, in paths, queries, headers and bodies, with and
// without credentials. Each is a 4xx that says what is wrong, and none is
// an error in the server's log: PostgreSQL refuses NUL and invalid UTF-8
// in text, and an id longer than its column, so they must not reach it.
func TestBadInputIsAClientErrorOnEveryDatabase(t *testing.T) {
	long := strings.Repeat("d", 65)
	cfg := func(name string) string {
		return `{"slug":"b2","config":{"basic_settings":{"name":"` + name + `"},"llm":{"model":"gpt-4o-mini"}}}`
	}
	completion := `{"model":"helper","messages":[{"role":"user","content":"hi"}]}`
	cases := []struct {
		name, method, path string
		anonymous          bool
		body               string
		headers            []string
	}{
		{name: "a NUL in the login email", method: "POST", path: "/v1/auth/login", anonymous: true,
			body: `{"email":"owner\u0000@shop.test","password":"member-password"}`},
		{name: "a NUL in the login password", method: "POST", path: "/v1/auth/login", anonymous: true,
			body: `{"email":"owner@shop.test","password":"pass\u0000word"}`},
		{name: "a login email that is not UTF-8", method: "POST", path: "/v1/auth/login", anonymous: true,
			body: "{\"email\":\"own\xffer@shop.test\",\"password\":\"member-password\"}"},
		{name: "a NUL in a message", method: "POST", path: "/v1/tenants/shop/dialogs/{d}/messages", body: `{"text":"hi\u0000there"}`},
		{name: "a message that is not UTF-8", method: "POST", path: "/v1/tenants/shop/dialogs/{d}/messages", body: "{\"text\":\"hi \xc3\x28 there\"}"},
		{name: "a NUL in a dialog id", method: "GET", path: "/v1/tenants/shop/dialogs/dlg%00x"},
		{name: "a dialog id that is not UTF-8", method: "GET", path: "/v1/tenants/shop/dialogs/dlg%FF"},
		{name: "a dialog id over 64 characters", method: "GET", path: "/v1/tenants/shop/dialogs/" + long},
		{name: "a message to a dialog id over 64 characters", method: "POST", path: "/v1/tenants/shop/dialogs/" + long + "/messages", body: `{"text":"hi"}`},
		{name: "a message to a dialog id with a NUL", method: "POST", path: "/v1/tenants/shop/dialogs/dlg%00x/messages", body: `{"text":"hi"}`},
		{name: "tool results for a dialog id over 64 characters", method: "POST", path: "/v1/tenants/shop/dialogs/" + long + "/tool-results",
			body: `{"results":[{"id":"c1","content":"x"}]}`},
		{name: "a NUL in a tenant", method: "GET", path: "/v1/tenants/sh%00op/dialogs"},
		{name: "a tenant that is not UTF-8", method: "GET", path: "/v1/tenants/%FF/bots"},
		{name: "a tenant of 300 characters", method: "GET", path: "/v1/tenants/" + strings.Repeat("t", 300) + "/bots"},
		{name: "a NUL in a bot", method: "POST", path: "/v1/tenants/shop/bots/hel%00per/dialogs", body: `{}`},
		{name: "a bot of 300 characters", method: "GET", path: "/v1/tenants/shop/bots/" + strings.Repeat("b", 300)},
		{name: "a NUL in a version number", method: "GET", path: "/v1/tenants/shop/bots/helper/versions/1%00"},
		{name: "a NUL in a new dialog's user id", method: "POST", path: "/v1/tenants/shop/bots/helper/dialogs", body: `{"user_id":"u\u0000"}`},
		{name: "a NUL in a secret's name", method: "PUT", path: "/v1/tenants/shop/secrets/a%00b", body: `{"value":"x"}`},
		{name: "a NUL in a secret's value", method: "PUT", path: "/v1/tenants/shop/secrets/ok", body: `{"value":"x\u0000y"}`},
		{name: "a NUL in a key's name", method: "POST", path: "/v1/tenants/shop/api-keys", body: `{"name":"a\u0000b","scopes":["chat"]}`},
		{name: "a NUL in a key id to revoke", method: "DELETE", path: "/v1/tenants/shop/api-keys/key%00x"},
		{name: "a key id of 300 characters to revoke", method: "DELETE", path: "/v1/tenants/shop/api-keys/" + strings.Repeat("k", 300)},
		{name: "a NUL in a bot config", method: "POST", path: "/v1/tenants/shop/bots", body: cfg(`Sh\u0000op`)},
		{name: "a bot config that is not UTF-8", method: "POST", path: "/v1/tenants/shop/bots", body: cfg("Sh\xffop")},
		{name: "a NUL in a config to validate", method: "POST", path: "/v1/validate", body: `{"config":{"basic_settings":{"name":"a\u0000"}}}`},
		{name: "a NUL in a tenant to create", method: "POST", path: "/v1/tenants", body: `{"slug":"a\u0000b","name":"x"}`},
		{name: "a NUL in a list's bot filter", method: "GET", path: "/v1/tenants/shop/dialogs?bot=%00"},
		{name: "a list's status filter that is not UTF-8", method: "GET", path: "/v1/tenants/shop/dialogs?status=%FF"},
		{name: "a NUL in a list's cursor", method: "GET", path: "/v1/tenants/shop/dialogs?cursor=%00"},
		{name: "a usage range that is not UTF-8", method: "GET", path: "/v1/tenants/shop/usage?from=%FF"},
		{name: "an Idempotency-Key that is not UTF-8", method: "POST", path: "/v1/tenants/shop/dialogs/{d}/messages", body: `{"text":"hi"}`,
			headers: []string{"Idempotency-Key", "k\xff"}},
		{name: "an Idempotency-Key of 300 characters", method: "POST", path: "/v1/tenants/shop/dialogs/{d}/messages", body: `{"text":"hi"}`,
			headers: []string{"Idempotency-Key", strings.Repeat("k", 300)}},
		{name: "a completion's dialog header that is not UTF-8", method: "POST", path: "/v1/chat/completions", body: completion,
			headers: []string{"X-Parley-Dialog", "dlg\xff"}},
		{name: "a completion's dialog header over 64 characters", method: "POST", path: "/v1/chat/completions", body: completion,
			headers: []string{"X-Parley-Dialog", long}},
	}
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		d := e.dialog(t)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				before := len(e.logs.String())
				token := e.key
				if tc.anonymous {
					token = ""
				}
				r := e.raw(t, tc.method, strings.ReplaceAll(tc.path, "{d}", d), token, tc.body, tc.headers...)
				if r.StatusCode < 400 || r.StatusCode >= 500 {
					t.Errorf("%s %s: %d %s; want a 4xx", tc.method, tc.path, r.StatusCode, r.body)
				}
				if r.StatusCode != http.StatusNotFound && !strings.Contains(r.body, `"error"`) {
					t.Errorf("%d without an error body: %s", r.StatusCode, r.body)
				}
				if logged := e.logs.String()[before:]; strings.Contains(logged, `"level":"ERROR"`) || strings.Contains(logged, `"level":"WARN"`) {
					t.Errorf("the server logged: %s", logged)
				}
				t.Logf("%d %s", r.StatusCode, r.body)
			})
		}
	})
}

// TestABodyThatIsNotAnObjectIsRefused sends null, an array, a string and a
// number to every route that reads a JSON object. encoding/json decodes
// null into a struct as a no-op, so without a check of its own a route
// took `null` as `{}` and, for a dialog, created one.
func TestABodyThatIsNotAnObjectIsRefused(t *testing.T) {
	routes := []struct{ method, path string }{
		{"POST", "/v1/auth/login"},
		{"POST", "/v1/auth/accept-invite"},
		{"POST", "/v1/chat/completions"},
		{"POST", "/v1/validate"},
		{"POST", "/v1/tenants"},
		{"PATCH", "/v1/tenants/shop"},
		{"POST", "/v1/tenants/shop/api-keys"},
		{"PUT", "/v1/tenants/shop/secrets/token"},
		{"POST", "/v1/tenants/shop/members"},
		{"PATCH", "/v1/tenants/shop/members/someone"},
		{"PUT", "/v1/tenants/shop/identity"},
		{"PUT", "/v1/tenants/shop/providers/mine"},
		{"PUT", "/v1/tenants/shop/limits"},
		{"POST", "/v1/tenants/shop/bots"},
		{"PATCH", "/v1/tenants/shop/bots/helper"},
		{"POST", "/v1/tenants/shop/bots/helper/tests"},
		{"PUT", "/v1/tenants/shop/bots/helper/canary"},
		{"POST", "/v1/tenants/shop/bots/helper/versions"},
		{"POST", "/v1/tenants/shop/bots/helper/publish"},
		{"POST", "/v1/tenants/shop/tools/try"},
		{"POST", "/v1/tenants/shop/webhooks"},
		{"PATCH", "/v1/tenants/shop/webhooks/wh1"},
		{"POST", "/v1/tenants/shop/webhooks/wh1/rotate-secret"},
		{"POST", "/v1/tenants/shop/channels"},
		{"PATCH", "/v1/tenants/shop/channels/ch1"},
		{"POST", "/v1/tenants/shop/channels/ch1/telegram/set-webhook"},
		{"POST", "/v1/tenants/shop/channels/ch1/rotate-secret"},
		{"POST", "/v1/tenants/shop/bots/helper/dialogs"},
		{"POST", "/v1/tenants/shop/dialogs/{d}/messages"},
		{"POST", "/v1/tenants/shop/dialogs/{d}/messages/m1/feedback"},
		{"POST", "/v1/tenants/shop/dialogs/{d}/tool-results"},
		{"POST", "/v1/tenants/shop/dialogs/{d}/confirmations"},
		{"POST", "/v1/tenants/shop/dialogs/{d}/close"},
		{"POST", "/v1/tenants/shop/dialogs/{d}/assign"},
		{"POST", "/v1/tenants/shop/dialogs/{d}/operator-messages"},
	}
	bodies := []string{`null`, ` null `, `[]`, `"x"`, `42`, `true`}
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		d := e.dialog(t)
		for _, rt := range routes {
			for _, body := range bodies {
				t.Run(rt.method+" "+rt.path+" with "+body+" is a 400", func(t *testing.T) {
					r := e.raw(t, rt.method, strings.ReplaceAll(rt.path, "{d}", d), e.key, body)
					if r.StatusCode != http.StatusBadRequest || !strings.Contains(r.body, "JSON object") {
						t.Errorf("%d %s; want 400 saying the body must be a JSON object", r.StatusCode, r.body)
					}
				})
			}
		}
	})
}
