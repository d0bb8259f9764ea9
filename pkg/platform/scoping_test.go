package platform_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// TestAnotherTenantsThingsAreNotFound calls every tenant-scoped method with
// tenant B's admin key on tenant A's resources, by A's slug, by A's id, and
// by B's own tenant with A's resource ids. All of it must be not_found, and
// A's data must be unchanged.
func TestAnotherTenantsThingsAreNotFound(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		a, adminA := e.tenantWithKey(t, "tenant-a")
		b, adminB := e.tenantWithKey(t, "tenant-b")
		botA := e.bot(t, adminA, a.ID, "support")
		keyA, err := e.svc.APIKeys().Create(ctx, adminA, a.ID, platform.APIKeyInput{Name: "k", Scopes: []string{"chat"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Secrets().Put(ctx, adminA, a.ID, "crm", "value"); err != nil {
			t.Fatal(err)
		}

		type call func(tenant, bot, key string) error
		calls := []struct {
			name string
			call call
		}{
			{"get the tenant", func(tn, _, _ string) error { _, err := e.svc.Tenants().Get(ctx, adminB, tn); return err }},
			{"list bots", func(tn, _, _ string) error {
				_, _, err := e.svc.Bots().List(ctx, adminB, tn, platform.ListOptions{})
				return err
			}},
			{"get a bot", func(tn, bot, _ string) error { _, err := e.svc.Bots().Get(ctx, adminB, tn, bot); return err }},
			{"create a bot", func(tn, _, _ string) error {
				_, _, err := e.svc.Bots().Create(ctx, adminB, tn, "intruder", []byte(configV1))
				return err
			}},
			{"create a version", func(tn, bot, _ string) error {
				_, _, err := e.svc.Versions().Create(ctx, adminB, tn, bot, []byte(configV2))
				return err
			}},
			{"list versions", func(tn, bot, _ string) error {
				_, _, err := e.svc.Versions().List(ctx, adminB, tn, bot, platform.ListOptions{})
				return err
			}},
			{"get a version", func(tn, bot, _ string) error { _, err := e.svc.Versions().Get(ctx, adminB, tn, bot, 1); return err }},
			{"publish", func(tn, bot, _ string) error { _, err := e.svc.Versions().Publish(ctx, adminB, tn, bot, 1); return err }},
			{"authorize chat", func(tn, bot, _ string) error {
				_, err := e.svc.Auth().AuthorizeChat(ctx, adminB, tn, bot, "")
				return err
			}},
			{"list keys", func(tn, _, _ string) error {
				_, _, err := e.svc.APIKeys().List(ctx, adminB, tn, platform.ListOptions{})
				return err
			}},
			{"create a key", func(tn, _, _ string) error {
				_, err := e.svc.APIKeys().Create(ctx, adminB, tn, platform.APIKeyInput{Name: "x", Scopes: []string{"admin"}})
				return err
			}},
			{"revoke a key", func(tn, _, key string) error { _, err := e.svc.APIKeys().Revoke(ctx, adminB, tn, key); return err }},
			{"put a secret", func(tn, _, _ string) error {
				_, err := e.svc.Secrets().Put(ctx, adminB, tn, "crm", "stolen")
				return err
			}},
			{"list secrets", func(tn, _, _ string) error { _, err := e.svc.Secrets().ListNames(ctx, adminB, tn); return err }},
			{"delete a secret", func(tn, _, _ string) error { return e.svc.Secrets().Delete(ctx, adminB, tn, "crm") }},
			{"list members", func(tn, _, _ string) error { _, err := e.svc.Members().List(ctx, adminB, tn); return err }},
			{"add a member", func(tn, _, _ string) error {
				_, err := e.svc.Members().Add(ctx, adminB, tn, "nobody@example.com", "viewer")
				return err
			}},
		}
		refs := []struct{ name, tenant, bot string }{
			{"by A's slug", a.Slug, botA.Slug},
			{"by A's id", a.ID, botA.ID},
		}
		for _, c := range calls {
			for _, r := range refs {
				t.Run("tenant B cannot "+c.name+" of tenant A "+r.name, func(t *testing.T) {
					wantCode(t, c.call(r.tenant, r.bot, keyA.ID), platform.CodeNotFound)
				})
			}
		}
		ownTenantCalls := []string{"get a bot", "create a version", "list versions", "get a version", "publish",
			"authorize chat", "revoke a key"}
		for _, c := range calls {
			if !slices.Contains(ownTenantCalls, c.name) {
				continue
			}
			t.Run("tenant B cannot "+c.name+" through its own tenant with A's ids", func(t *testing.T) {
				wantCode(t, c.call(b.ID, botA.ID, keyA.ID), platform.CodeNotFound)
			})
		}
		t.Run("tenant B cannot bind a pk key of its own to A's bot", func(t *testing.T) {
			_, err := e.svc.APIKeys().Create(ctx, adminB, b.ID, platform.APIKeyInput{Name: "x", Bot: botA.ID, Origins: []string{"https://a.example"}})
			wantInvalid(t, err, "/bot")
		})

		t.Run("tenant B's store handle reaches none of A's rows", func(t *testing.T) {
			asB := e.store.Tenant(b.ID)
			if _, err := asB.Bots().Get(ctx, botA.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("A's bot through B's handle: %v", err)
			}
			if _, err := asB.Keys().Get(ctx, keyA.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("A's key through B's handle: %v", err)
			}
			if got, err := asB.Secrets().Get(ctx, []string{"crm"}); err != nil || len(got) != 0 {
				t.Fatalf("A's secret through B's handle: %v, %v", got, err)
			}
		})
		t.Run("tenant A's data is unchanged", func(t *testing.T) {
			e.authenticate(t, keyA.Key) // not revoked
			vs, _, _ := e.svc.Versions().List(ctx, adminA, a.ID, botA.ID, platform.ListOptions{})
			bot, _ := e.svc.Bots().Get(ctx, adminA, a.ID, botA.ID)
			vars, _ := e.svc.Secrets().Vars(ctx, a.ID, []string{"crm"})
			if len(vs) != 1 || bot.PublishedVersion != 0 || vars["secrets.crm"] != "value" {
				t.Fatalf("versions %d, published %d, secret %q", len(vs), bot.PublishedVersion, vars["secrets.crm"])
			}
			bots, _, _ := e.svc.Bots().List(ctx, adminB, b.ID, platform.ListOptions{})
			if len(bots) != 0 {
				t.Fatalf("tenant B has bots %+v", bots)
			}
		})
	})
}
