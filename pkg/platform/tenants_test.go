package platform_test

import (
	"testing"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
)

func TestCreateTenant(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		tn, key, err := e.svc.Tenants().Create(ctx, platform.Operator(), platform.CreateTenantInput{
			Slug: "acme", Name: "Acme", OwnerEmail: "ada@acme.example", OwnerPassword: "correct horse"})
		if err != nil {
			t.Fatal(err)
		}
		t.Run("the first key is an sk admin key of the new tenant", func(t *testing.T) {
			p := e.authenticate(t, key.Key)
			if p.TenantID != tn.ID || p.KeyKind != auth.KindSecret || len(p.Scopes) != 1 || p.Scopes[0] != auth.ScopeAdmin {
				t.Fatalf("principal %+v", p)
			}
			if key.Prefix == "" || key.Last4 != key.Key[len(key.Key)-4:] {
				t.Fatalf("key record %+v", key.APIKey)
			}
		})
		t.Run("the owner can sign in and owns the tenant", func(t *testing.T) {
			sess, err := e.svc.Auth().Login(ctx, "ADA@acme.example", "correct horse")
			if err != nil {
				t.Fatal(err)
			}
			me, err := e.svc.Auth().Me(ctx, e.authenticate(t, sess.Token))
			if err != nil || len(me.Memberships) != 1 || me.Memberships[0].Role != auth.RoleOwner || me.Memberships[0].Tenant.ID != tn.ID {
				t.Fatalf("me %+v, %v", me, err)
			}
		})
		t.Run("a taken slug is a conflict", func(t *testing.T) {
			_, _, err := e.svc.Tenants().Create(ctx, platform.Operator(), platform.CreateTenantInput{Slug: "acme"})
			wantCode(t, err, platform.CodeConflict)
		})
		t.Run("a tenant key cannot create tenants", func(t *testing.T) {
			_, _, err := e.svc.Tenants().Create(ctx, e.authenticate(t, key.Key), platform.CreateTenantInput{Slug: "other"})
			wantCode(t, err, platform.CodeForbidden)
		})
		t.Run("no principal is unauthorized", func(t *testing.T) {
			_, _, err := e.svc.Tenants().Create(ctx, nil, platform.CreateTenantInput{Slug: "other"})
			wantCode(t, err, platform.CodeUnauthorized)
		})
		t.Run("a failed owner leaves no tenant behind", func(t *testing.T) {
			_, _, err := e.svc.Tenants().Create(ctx, platform.Operator(), platform.CreateTenantInput{
				Slug: "half", OwnerEmail: "bob@example.com", OwnerPassword: "short"})
			wantCode(t, err, platform.CodeInvalid)
			_, err = e.svc.Tenants().Get(ctx, platform.Operator(), "half")
			wantCode(t, err, platform.CodeNotFound)
		})
	})
}

func TestCreateTenantValidation(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		cases := []struct {
			name     string
			in       platform.CreateTenantInput
			pointers []string
		}{
			{"an empty slug and name are both reported", platform.CreateTenantInput{}, []string{"/slug", "/name"}},
			{"an upper-case slug is invalid", platform.CreateTenantInput{Slug: "Acme"}, []string{"/slug"}},
			{"a slug shaped like an id is invalid", platform.CreateTenantInput{Slug: "ten_abc"}, []string{"/slug"}},
			{"a slug with a slash is invalid", platform.CreateTenantInput{Slug: "a/b"}, []string{"/slug"}},
			{"an owner email that is not an address is invalid", platform.CreateTenantInput{Slug: "ok", OwnerEmail: "nope", OwnerPassword: "correct horse"}, []string{"/owner_email"}},
			{"an owner without a password is invalid", platform.CreateTenantInput{Slug: "ok", OwnerEmail: "bo@example.com"}, []string{"/owner_password"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, _, err := e.svc.Tenants().Create(ctx, platform.Operator(), tc.in)
				wantInvalid(t, err, tc.pointers...)
			})
		}
	})
}

func TestListTenants(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		a, pa := e.tenantWithKey(t, "tenant-a")
		e.tenantWithKey(t, "tenant-b")
		t.Run("the operator sees every tenant", func(t *testing.T) {
			all, _, err := e.svc.Tenants().List(ctx, platform.Operator(), platform.ListOptions{})
			if err != nil || len(all) != 2 {
				t.Fatalf("tenants %+v, %v", all, err)
			}
		})
		t.Run("a key sees only its own tenant", func(t *testing.T) {
			own, _, err := e.svc.Tenants().List(ctx, pa, platform.ListOptions{})
			if err != nil || len(own) != 1 || own[0].ID != a.ID {
				t.Fatalf("tenants %+v, %v", own, err)
			}
		})
	})
}
