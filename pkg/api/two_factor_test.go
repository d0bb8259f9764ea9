package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// sessionCookie is the session a response set, or "".
func sessionCookie(r rawResponse) string {
	for _, c := range r.Cookies() {
		if c.Name == "parley_session" {
			return c.Value
		}
	}
	return ""
}

func TestTwoFactorSignInThroughTheAPI(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		clock := platformtest.NewClock(time.Now().UTC())
		// An email may try 12 times, then waits an hour: the test counts
		// every password and code it sends.
		limit := api.LoginLimit{EmailBurst: 12, EmailEvery: time.Hour, IPBurst: 1 << 20, IPEvery: time.Millisecond}
		e := newEnvWithPlatform(t, st, func(o *platform.Options) { o.Clock = clock.Now }, func(o *api.Options) { o.LoginLimit = &limit })
		adminKey := e.mustCreateTenant(t, "acme")
		ctx := context.Background()
		owner := e.client(signIn(t, e, "acme").Value) // attempt 1
		code := func(secret string) string {
			c, err := platform.TOTPCode(secret, clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		login := func(t *testing.T) apiclient.LoginResponse {
			t.Helper()
			r := e.raw(t, "POST", "/v1/auth/login", "", `{"email": "owner@acme.test", "password": "member-password"}`)
			var out apiclient.LoginResponse
			if r.StatusCode != http.StatusAccepted || json.Unmarshal([]byte(r.body), &out) != nil || out.TwoFactor != "code" || out.Challenge == "" || sessionCookie(r) != "" {
				t.Fatalf("login: %d %s; want 202 with a challenge and no session", r.StatusCode, r.body)
			}
			return out
		}
		verify := func(t *testing.T, body string) rawResponse {
			t.Helper()
			return e.raw(t, "POST", "/v1/auth/totp/verify", "", body)
		}

		enrol, err := owner.StartTOTP(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		var recovery []string
		t.Run("a wrong code does not turn it on, a current one does and shows recovery codes", func(t *testing.T) {
			if _, err := owner.ConfirmTOTP(ctx, "", "000000"); apiCode(err) != http.StatusUnprocessableEntity { // 2
				t.Fatalf("wrong code: %v", err)
			}
			done, err := owner.ConfirmTOTP(ctx, "", code(enrol.Secret)) // 3
			if err != nil {
				t.Fatal(err)
			}
			recovery = done.RecoveryCodes
			if st, err := owner.TOTP(ctx); err != nil || !st.Enabled || st.RecoveryCodesLeft != 10 || len(recovery) != 10 {
				t.Fatalf("status %+v, %v; %d codes", st, err, len(recovery))
			}
		})

		t.Run("the code that confirmed is refused as replayed; the next one signs in", func(t *testing.T) {
			ch := login(t)                                                                        // 4
			r := verify(t, `{"challenge": "`+ch.Challenge+`", "code": "`+code(enrol.Secret)+`"}`) // 5
			if r.StatusCode != http.StatusUnauthorized || !strings.Contains(r.body, "used already") {
				t.Fatalf("replayed code: %d %s", r.StatusCode, r.body)
			}
			clock.Advance(30 * time.Second)
			r = verify(t, `{"challenge": "`+ch.Challenge+`", "code": "`+code(enrol.Secret)+`"}`) // 6
			token := sessionCookie(r)
			if r.StatusCode != http.StatusOK || token == "" {
				t.Fatalf("verify: %d %s", r.StatusCode, r.body)
			}
			list, err := e.client(token).ListSessions(ctx)
			if err != nil || list.Sessions[0].Via != "two_factor" {
				t.Fatalf("sessions %+v, %v; want the newest via two_factor", list, err)
			}
		})

		t.Run("a recovery code signs in once", func(t *testing.T) {
			ch := login(t)                                                                                                              // 7
			if r := verify(t, `{"challenge": "`+ch.Challenge+`", "recovery_code": "`+recovery[0]+`"}`); r.StatusCode != http.StatusOK { // 8
				t.Fatalf("recovery code: %d %s", r.StatusCode, r.body)
			}
			ch = login(t)                                                                                                                         // 9
			if r := verify(t, `{"challenge": "`+ch.Challenge+`", "recovery_code": "`+recovery[0]+`"}`); r.StatusCode != http.StatusUnauthorized { // 10
				t.Fatalf("the same recovery code again: %d %s", r.StatusCode, r.body)
			}
		})

		t.Run("wrong codes are limited like passwords, even a right one waits", func(t *testing.T) {
			ch := login(t)                                                   // 11
			verify(t, `{"challenge": "`+ch.Challenge+`", "code": "000000"}`) // 12
			r := verify(t, `{"challenge": "`+ch.Challenge+`", "code": "000000"}`)
			if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
				t.Fatalf("13th attempt: %d %s", r.StatusCode, r.body)
			}
			clock.Advance(30 * time.Second)
			if r := verify(t, `{"challenge": "`+ch.Challenge+`", "code": "`+code(enrol.Secret)+`"}`); r.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("a right code past the limit: %d %s", r.StatusCode, r.body)
			}
		})

		t.Run("the tenant's requirement is a setting admins see and change", func(t *testing.T) {
			on := true
			if err := e.client(adminKey).Do(ctx, http.MethodPatch, "/v1/tenants/acme", apiclient.UpdateTenantRequest{RequireTwoFactor: &on}, nil); err != nil {
				t.Fatal(err)
			}
			got, err := e.client(adminKey).GetTenant(ctx, "acme")
			if err != nil || !got.RequireTwoFactor {
				t.Fatalf("tenant %+v, %v", got, err)
			}
		})
	})
}
