package platform_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
)

// TestEveryCallerAgainstEveryOperation runs each platform operation as each
// kind of caller of the tenant — a signed-in user of every role, and every
// kind of key — and expects exactly the listed ones to be allowed; the rest
// must be forbidden (the caller belongs to the tenant, so not not_found).
func TestEveryCallerAgainstEveryOperation(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		tn, admin := e.tenantWithKey(t, "acme")
		bot := e.bot(t, admin, tn.ID, "support")
		op := platform.Operator()
		if _, err := e.svc.Users().Create(ctx, op, "member@acme.example", "member-password"); err != nil {
			t.Fatal(err)
		}

		callers := map[string]*platform.Principal{}
		for _, role := range auth.Roles() {
			email := role + "@acme.example"
			if _, err := e.svc.Users().Create(ctx, op, email, "password-"+role); err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.Members().Add(ctx, op, tn.ID, email, role); err != nil {
				t.Fatal(err)
			}
			sess, err := e.svc.Auth().Login(ctx, email, "password-"+role)
			if err != nil {
				t.Fatal(err)
			}
			callers["a signed-in "+role] = e.authenticate(t, sess.Token)
		}
		keyCaller := func(in platform.APIKeyInput) *platform.Principal {
			k, err := e.svc.APIKeys().Create(ctx, admin, tn.ID, in)
			if err != nil {
				t.Fatal(err)
			}
			return e.authenticate(t, k.Key)
		}
		callers["an sk key with the admin scope"] = admin
		callers["an sk key with the chat scope"] = keyCaller(platform.APIKeyInput{Name: "chat", Scopes: []string{"chat"}})
		callers["a pk key"] = keyCaller(platform.APIKeyInput{Name: "pk", Bot: bot.ID, Origins: []string{"https://acme.example"}})

		n := 0
		ops := []struct {
			name string
			call func(p *platform.Principal) error
		}{
			{"read the tenant", func(p *platform.Principal) error { _, err := e.svc.Tenants().Get(ctx, p, tn.ID); return err }},
			{"list bots", func(p *platform.Principal) error {
				_, _, err := e.svc.Bots().List(ctx, p, tn.ID, platform.ListOptions{})
				return err
			}},
			{"list versions", func(p *platform.Principal) error {
				_, _, err := e.svc.Versions().List(ctx, p, tn.ID, bot.ID, platform.ListOptions{})
				return err
			}},
			{"create a bot", func(p *platform.Principal) error {
				n++
				_, _, err := e.svc.Bots().Create(ctx, p, tn.ID, fmt.Sprintf("bot-%d", n), []byte(configV1))
				return err
			}},
			{"save a version", func(p *platform.Principal) error {
				_, _, err := e.svc.Versions().Create(ctx, p, tn.ID, bot.ID, []byte(configV2))
				return err
			}},
			{"publish", func(p *platform.Principal) error {
				_, err := e.svc.Versions().Publish(ctx, p, tn.ID, bot.ID, 1)
				return err
			}},
			{"list keys", func(p *platform.Principal) error {
				_, _, err := e.svc.APIKeys().List(ctx, p, tn.ID, platform.ListOptions{})
				return err
			}},
			{"create a key", func(p *platform.Principal) error {
				_, err := e.svc.APIKeys().Create(ctx, p, tn.ID, platform.APIKeyInput{Name: "x", Scopes: []string{"admin"}})
				return err
			}},
			{"list secret names", func(p *platform.Principal) error { _, err := e.svc.Secrets().ListNames(ctx, p, tn.ID); return err }},
			{"put a secret", func(p *platform.Principal) error {
				_, err := e.svc.Secrets().Put(ctx, p, tn.ID, "crm", "v")
				return err
			}},
			{"list members", func(p *platform.Principal) error { _, err := e.svc.Members().List(ctx, p, tn.ID); return err }},
			{"add a viewer", func(p *platform.Principal) error {
				_, err := e.svc.Members().Add(ctx, p, tn.ID, "member@acme.example", auth.RoleViewer)
				return err
			}},
			{"make someone owner", func(p *platform.Principal) error {
				_, err := e.svc.Members().Add(ctx, p, tn.ID, "member@acme.example", auth.RoleOwner)
				if err == nil { // put the member back, so later rows test the same thing
					_, err = e.svc.Members().Add(ctx, op, tn.ID, "member@acme.example", auth.RoleViewer)
				}
				return err
			}},
			{"chat with the bot", func(p *platform.Principal) error {
				_, err := e.svc.Auth().AuthorizeChat(ctx, p, tn.ID, bot.ID, "https://acme.example")
				return err
			}},
			{"create tenants", func(p *platform.Principal) error {
				n++
				_, _, err := e.svc.Tenants().Create(ctx, p, platform.CreateTenantInput{Slug: fmt.Sprintf("t-%d", n)})
				return err
			}},
		}
		viewer := []string{"read the tenant", "list bots", "list versions", "list members"}
		editor := append(slices.Clone(viewer), "create a bot", "save a version", "list secret names", "chat with the bot")
		adminOps := append(slices.Clone(editor), "publish", "list keys", "create a key", "put a secret", "add a viewer")
		allowed := map[string][]string{
			"a signed-in viewer":             viewer,
			"a signed-in operator":           viewer,
			"a signed-in editor":             editor,
			"a signed-in admin":              adminOps,
			"a signed-in owner":              append(slices.Clone(adminOps), "make someone owner"),
			"an sk key with the admin scope": adminOps,
			"an sk key with the chat scope":  {"chat with the bot"},
			"a pk key":                       {"chat with the bot"},
		}
		for who, p := range callers {
			for _, o := range ops {
				may := slices.Contains(allowed[who], o.name)
				verb, want := "may not", platform.CodeForbidden
				if may {
					verb, want = "may", ""
				}
				t.Run(fmt.Sprintf("%s %s %s", who, verb, o.name), func(t *testing.T) {
					wantCode(t, o.call(p), want)
				})
			}
		}
	})
}

func TestPublishableKeysChatOnlyWithTheirBotFromTheirOrigins(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		tn, admin := e.tenantWithKey(t, "acme")
		own := e.bot(t, admin, tn.ID, "widget")
		e.bot(t, admin, tn.ID, "internal")
		k, err := e.svc.APIKeys().Create(ctx, admin, tn.ID, platform.APIKeyInput{Name: "site", Bot: "widget",
			Origins: []string{"https://acme.example", "http://localhost:3000"}})
		if err != nil {
			t.Fatal(err)
		}
		pk := e.authenticate(t, k.Key)
		cases := []struct {
			name, bot, origin string
			want              platform.Code
		}{
			{"its bot from an allowed origin is allowed", own.Slug, "https://acme.example", ""},
			{"its bot from another allowed origin, in other case, is allowed", own.ID, "HTTP://localhost:3000", ""},
			{"its bot from an unlisted origin is forbidden", own.Slug, "https://evil.example", platform.CodeForbidden},
			{"its bot from a look-alike origin is forbidden", own.Slug, "https://acme.example.evil.example", platform.CodeForbidden},
			{"its bot without an origin is forbidden", own.Slug, "", platform.CodeForbidden},
			{"another bot of the tenant is forbidden", "internal", "https://acme.example", platform.CodeForbidden},
			{"a bot that does not exist is not found", "ghost", "https://acme.example", platform.CodeNotFound},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, err := e.svc.Auth().AuthorizeChat(ctx, pk, tn.ID, tc.bot, tc.origin)
				wantCode(t, err, tc.want)
			})
		}
	})
}
