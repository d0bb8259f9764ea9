package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// acceptInvite accepts an invite over the wire and returns the session
// token its cookie carries.
func acceptInvite(t *testing.T, e *env, token, password string) string {
	t.Helper()
	body, _ := json.Marshal(apiclient.AcceptInviteRequest{Token: token, Password: password})
	resp := e.raw(t, "POST", "/v1/auth/accept-invite", "", string(body))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("accept invite: %d %s", resp.StatusCode, resp.body)
	}
	for _, c := range resp.Cookies() {
		if c.Name == "parley_session" {
			return c.Value
		}
	}
	t.Fatal("accepting an invite set no session cookie")
	return ""
}

func apiCode(err error) int {
	var e *apiclient.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

func TestAnInvitedEditorSetsAPasswordSignsInAndCannotDoAnAdminsWork(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		adminKey := e.mustCreateTenant(t, "acme")
		admin := e.client(adminKey)
		ctx := context.Background()
		inv, err := admin.InviteMember(ctx, "acme", "Eve@Example.com", "editor")
		if err != nil {
			t.Fatal(err)
		}
		if inv.InviteToken == "" || inv.InvitePath != "/admin/#/invite/"+inv.InviteToken || !inv.Pending || inv.Email != "eve@example.com" {
			t.Fatalf("invitation %+v, want a pending editor with a token and its admin UI path", inv)
		}
		t.Run("the invited member is listed as pending", func(t *testing.T) {
			list, err := admin.ListMembers(ctx, "acme")
			if err != nil {
				t.Fatal(err)
			}
			var found bool
			for _, m := range list.Members {
				found = found || (m.Email == "eve@example.com" && m.Role == "editor" && m.Pending)
			}
			if !found {
				t.Fatalf("members %+v lack pending editor eve", list.Members)
			}
		})
		t.Run("a member goes over the wire with exactly its fields", func(t *testing.T) {
			var list apiclient.MemberList
			body := e.strictGet(t, "/v1/tenants/acme/members", adminKey, &list)
			wantKeys(t, body, []string{"members"})
			wantKeys(t, body, []string{"user_id", "email", "role", "pending"}, "members", 0)
		})
		t.Run("a pending member cannot sign in before accepting", func(t *testing.T) {
			_, err := e.client("").Login(ctx, "eve@example.com", "")
			if apiCode(err) != http.StatusUnauthorized {
				t.Fatalf("login = %v, want 401", err)
			}
		})
		t.Run("a common or short password is refused and the link still works", func(t *testing.T) {
			for _, pw := range []string{"password1234", "short"} {
				_, err := e.client("").AcceptInvite(ctx, inv.InviteToken, pw)
				if apiCode(err) != http.StatusUnprocessableEntity {
					t.Fatalf("accept with %q = %v, want 422", pw, err)
				}
			}
		})
		session := acceptInvite(t, e, inv.InviteToken, "plum tractor velvet")
		editor := e.client(session)
		t.Run("the link works once", func(t *testing.T) {
			_, err := e.client("").AcceptInvite(ctx, inv.InviteToken, "another fine password")
			if apiCode(err) != http.StatusNotFound {
				t.Fatalf("second accept = %v, want 404", err)
			}
		})
		t.Run("the editor signs in with the new password", func(t *testing.T) {
			me, err := e.client("").Login(ctx, "eve@example.com", "plum tractor velvet")
			if err != nil || len(me.Memberships) != 1 || me.Memberships[0].Role != "editor" {
				t.Fatalf("login = %+v, %v; want an editor of acme", me, err)
			}
		})
		t.Run("the editor works on bots", func(t *testing.T) {
			if _, err := editor.CreateBot(ctx, "acme", "support", json.RawMessage(`{"basic_settings": {"name": "Support"}}`)); err != nil {
				t.Fatal(err)
			}
		})
		refused := map[string]func() error{
			"list keys": func() error { _, err := editor.ListAPIKeys(ctx, "acme", ""); return err },
			"create a key": func() error {
				_, err := editor.CreateAPIKey(ctx, "acme", apiclient.CreateAPIKeyRequest{Name: "x", Scopes: []string{"admin"}})
				return err
			},
			"invite":        func() error { _, err := editor.InviteMember(ctx, "acme", "mallory@example.com", "admin"); return err },
			"promote self":  func() error { _, err := editor.SetMemberRole(ctx, "acme", "eve@example.com", "admin"); return err },
			"read audit":    func() error { _, err := editor.AuditLog(ctx, "acme", apiclient.AuditQuery{}); return err },
			"set a secret":  func() error { _, err := editor.PutSecret(ctx, "acme", "crm_token", "v"); return err },
			"publish a bot": func() error { _, err := editor.Publish(ctx, "acme", "support", 1); return err },
		}
		for name, call := range refused {
			t.Run("the editor may not "+name, func(t *testing.T) {
				if err := call(); apiCode(err) != http.StatusForbidden {
					t.Fatalf("= %v, want 403", err)
				}
			})
		}
	})
}

func TestTheLastOwnerCanBeNeitherDemotedNorRemoved(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		e.mustCreateTenant(t, "acme")
		ctx := context.Background()
		owner := e.client(signIn(t, e, "acme").Value)
		for name, call := range map[string]func() error{
			"demoted": func() error { _, err := owner.SetMemberRole(ctx, "acme", "owner@acme.test", "admin"); return err },
			"removed": func() error { return owner.RemoveMember(ctx, "acme", "owner@acme.test") },
		} {
			t.Run("the only owner cannot be "+name, func(t *testing.T) {
				if err := call(); apiCode(err) != http.StatusConflict {
					t.Fatalf("= %v, want 409", err)
				}
			})
		}
		t.Run("an admin cannot demote an owner", func(t *testing.T) {
			inv, err := owner.InviteMember(ctx, "acme", "ada@example.com", "admin")
			if err != nil {
				t.Fatal(err)
			}
			admin := e.client(acceptInvite(t, e, inv.InviteToken, "plum tractor velvet"))
			_, err = admin.SetMemberRole(ctx, "acme", "owner@acme.test", "viewer")
			if apiCode(err) != http.StatusForbidden {
				t.Fatalf("= %v, want 403", err)
			}
		})
		t.Run("two owners demoting each other at once leave one owner", func(t *testing.T) {
			inv, err := owner.InviteMember(ctx, "acme", "bo@example.com", "owner")
			if err != nil {
				t.Fatal(err)
			}
			second := e.client(acceptInvite(t, e, inv.InviteToken, "plum tractor velvet"))
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, pair := range []struct {
				c    *apiclient.Client
				whom string
			}{{owner, "bo@example.com"}, {second, "owner@acme.test"}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = pair.c.SetMemberRole(ctx, "acme", pair.whom, "admin")
				}()
			}
			wg.Wait()
			ok, conflicts := 0, 0
			for _, err := range errs {
				switch {
				case err == nil:
					ok++
				case apiCode(err) == http.StatusConflict || apiCode(err) == http.StatusForbidden:
					// The loser is either the last owner now (409), or was
					// demoted itself before it could act (403).
					conflicts++
				default:
					t.Fatalf("unexpected error %v", err)
				}
			}
			if ok != 1 || conflicts != 1 {
				t.Fatalf("results %v, want one success and one refusal", errs)
			}
			owners := 0
			list, err := e.client(testPlatformToken).ListMembers(ctx, "acme")
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range list.Members {
				if m.Role == "owner" {
					owners++
				}
			}
			if owners != 1 {
				t.Fatalf("%d owners left, want 1: %+v", owners, list.Members)
			}
		})
	})
}

func TestSignInsAreLimitedPerEmailAndPerAddress(t *testing.T) {
	t.Parallel()
	limit := api.LoginLimit{EmailBurst: 3, EmailEvery: time.Hour, IPBurst: 5, IPEvery: time.Hour}
	e := newEnvWith(t, storetest.OpenSQLite(t), func(o *api.Options) { o.LoginLimit = &limit })
	e.mustCreateTenant(t, "acme")
	e.mustCreateTenant(t, "beta")
	login := func(email, password string) rawResponse {
		body, _ := json.Marshal(apiclient.LoginRequest{Email: email, Password: password})
		return e.raw(t, "POST", "/v1/auth/login", "", string(body))
	}
	for i := range 3 {
		if r := login("owner@acme.test", "wrong password!"); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d %s, want 401", i+1, r.StatusCode, r.body)
		}
	}
	t.Run("past an email's attempts, even the right password is refused with 429 and Retry-After", func(t *testing.T) {
		r := login("OWNER@acme.test", "member-password")
		if r.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("%d %s, want 429", r.StatusCode, r.body)
		}
		if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 3600 {
			t.Fatalf("Retry-After %q, want whole seconds up to the refill", r.Header.Get("Retry-After"))
		}
	})
	t.Run("another email from the same address still signs in", func(t *testing.T) {
		if r := login("owner@beta.test", "member-password"); r.StatusCode != http.StatusOK {
			t.Fatalf("%d %s, want 200", r.StatusCode, r.body)
		}
	})
	t.Run("past the address's attempts, every email is refused", func(t *testing.T) {
		if r := login("owner@beta.test", "wrong password!"); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%d %s, want 401 (the address's fifth attempt)", r.StatusCode, r.body)
		}
		r := login("owner@beta.test", "member-password")
		if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
			t.Fatalf("%d %s, want 429 with Retry-After", r.StatusCode, r.body)
		}
	})
	t.Run("a forwarded address is not believed from an untrusted peer", func(t *testing.T) {
		body, _ := json.Marshal(apiclient.LoginRequest{Email: "owner@beta.test", Password: "member-password"})
		r := e.raw(t, "POST", "/v1/auth/login", "", string(body), "X-Forwarded-For", "203.0.113.9")
		if r.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("%d %s, want 429: X-Forwarded-For must not reset the address's attempts", r.StatusCode, r.body)
		}
	})
}

// TestAnInviteCannotHandSomeonesAccountOrTenantsToAnother: an admin of
// another tenant who invites a person and accepts the link themselves gets
// only their own tenant; the person's pending invite elsewhere stays theirs
// to accept, and a person who has an account accepts with its password.
func TestAnInviteCannotHandSomeonesAccountOrTenantsToAnother(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ctx := context.Background()
		acme := e.client(e.mustCreateTenant(t, "acme"))
		evil := e.client(e.mustCreateTenant(t, "evil"))
		real, err := acme.InviteMember(ctx, "acme", "eve@example.com", "admin")
		if err != nil {
			t.Fatal(err)
		}
		stolen, err := evil.InviteMember(ctx, "evil", "eve@example.com", "viewer")
		if err != nil {
			t.Fatal(err)
		}
		attacker := e.client(acceptInvite(t, e, stolen.InviteToken, "the attacker's password"))
		t.Run("the other tenant's admin reaches nothing of acme as eve", func(t *testing.T) {
			if _, err := attacker.ListBots(ctx, "acme", ""); apiCode(err) != http.StatusNotFound {
				t.Fatalf("listing acme's bots = %v, want 404", err)
			}
			me, err := attacker.Me(ctx)
			if err != nil || len(me.Memberships) != 1 || me.Memberships[0].Tenant.Slug != "evil" {
				t.Fatalf("me = %+v, %v; want evil only", me, err)
			}
		})
		t.Run("acme's link does not reset the password of an account that has one", func(t *testing.T) {
			_, err := e.client("").AcceptInvite(ctx, real.InviteToken, "eve's own new password")
			if apiCode(err) != http.StatusUnauthorized {
				t.Fatalf("accept = %v, want 401", err)
			}
			if _, err := e.client("").Login(ctx, "eve@example.com", "the attacker's password"); err != nil {
				t.Fatalf("the account's password changed: %v", err)
			}
		})
		t.Run("an existing user invited elsewhere accepts with their password", func(t *testing.T) {
			inv, err := acme.InviteMember(ctx, "acme", "owner@evil.test", "viewer")
			if err != nil || inv.InviteToken == "" || !inv.Pending {
				t.Fatalf("invite of an existing user = %+v, %v; want a pending member with a token", inv, err)
			}
			owner := e.client(signIn(t, e, "evil").Value)
			if _, err := owner.ListBots(ctx, "acme", ""); apiCode(err) != http.StatusNotFound {
				t.Fatalf("before accepting: %v, want 404", err)
			}
			if _, err := e.client("").AcceptInvite(ctx, inv.InviteToken, "not the password"); apiCode(err) != http.StatusUnauthorized {
				t.Fatalf("accept with a wrong password = %v, want 401", err)
			}
			if _, err := e.client("").AcceptInvite(ctx, inv.InviteToken, "member-password"); err != nil {
				t.Fatalf("accept with the password: %v", err)
			}
			if _, err := owner.ListBots(ctx, "acme", ""); err != nil {
				t.Fatalf("after accepting: %v", err)
			}
		})
	})
}
