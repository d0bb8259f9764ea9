package dialog_test

import (
	"testing"

	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
)

// TestTurnAuthorization checks who may send a message once the turn path
// has the tenant cached: the cache names tenants and holds no permission,
// so every caller is still judged on every request.
func TestTurnAuthorization(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		gold := map[string]string{"tier": "gold"}
		widget := e.keyPrincipal(t, platform.APIKeyInput{Name: "widget", Bot: "helper", Origins: []string{"https://shop.example"}})
		d, err := e.rt.Dialogs().Create(ctx, widget, "shop", "helper", dialog.CreateDialogInput{Context: gold, Origin: "https://shop.example"})
		if err != nil {
			t.Fatal(err)
		}
		send := func(p *platform.Principal, tenant, dialogID, origin string) error {
			if e.llm.Pending() == 0 { // a refused send leaves its reply to the next
				e.llm.Enqueue(llmtest.ServerReply{Text: "ok"})
			}
			_, err := e.rt.SendMessage(ctx, p, tenant, dialogID, dialog.SendInput{Text: "hi", Origin: origin}, nil)
			return err
		}
		// Warm the cache under the slug and the id.
		if err := send(e.admin, "shop", d.ID, ""); err != nil {
			t.Fatal(err)
		}
		if err := send(e.admin, e.tenant.ID, d.ID, ""); err != nil {
			t.Fatal(err)
		}
		otherTenant, otherKey := e.tenantWithKey(t, "other")
		if _, _, err := e.svc.Bots().Create(ctx, e.admin, "shop", "sales", []byte(configV1)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Versions().Publish(ctx, e.admin, "shop", "sales", 1); err != nil {
			t.Fatal(err)
		}
		sales, err := e.rt.Dialogs().Create(ctx, e.admin, "shop", "sales", dialog.CreateDialogInput{})
		if err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name                   string
			p                      *platform.Principal
			tenant, dialog, origin string
			want                   platform.Code
		}{
			{"the widget key chats from its origin", widget, "shop", d.ID, "https://shop.example", ""},
			{"the widget key from another origin is forbidden", widget, "shop", d.ID, "https://evil.example", platform.CodeForbidden},
			{"the widget key cannot find another bot's dialog", widget, "shop", sales.ID, "https://shop.example", platform.CodeNotFound},
			{"another tenant's key cannot find the cached tenant", otherKey, "shop", d.ID, "", platform.CodeNotFound},
			{"another tenant's key cannot find the dialog through its own tenant", otherKey, otherTenant.ID, d.ID, "", platform.CodeNotFound},
			{"an unknown tenant is not found", e.admin, "nowhere", d.ID, "", platform.CodeNotFound},
			{"no caller is unauthorized", nil, "shop", d.ID, "", platform.CodeUnauthorized},
		}
		stored := func(dialogID string) int {
			msgs, err := e.store.Tenant(e.tenant.ID).Messages().List(ctx, dialogID, 0)
			if err != nil {
				t.Fatal(err)
			}
			return len(msgs)
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				before := stored(tc.dialog)
				wantCode(t, send(tc.p, tc.tenant, tc.dialog, tc.origin), tc.want)
				if after := stored(tc.dialog); tc.want != "" && after != before {
					t.Fatalf("a refused text was stored: %d messages, then %d", before, after)
				}
			})
		}
		t.Run("a dialog being answered is found only by who may chat with it", func(t *testing.T) {
			for e.llm.Pending() > 0 {
				if err := send(e.admin, "shop", d.ID, ""); err != nil {
					t.Fatal(err)
				}
			}
			done := e.sendSlowly(e.admin, sales.ID, "hello", "slowly")
			before := stored(sales.ID)
			for _, p := range []*platform.Principal{widget, otherKey} {
				_, err := e.rt.SendMessage(ctx, p, "shop", sales.ID, dialog.SendInput{Text: "let me in", Origin: "https://shop.example"}, nil)
				wantCode(t, err, platform.CodeNotFound)
			}
			if after := stored(sales.ID); after != before {
				t.Fatalf("a refused text joined the running reply: %d messages, then %d", before, after)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
		t.Run("a revoked key fails on its very next request", func(t *testing.T) {
			k, err := e.svc.APIKeys().Create(ctx, e.admin, "shop", platform.APIKeyInput{Name: "soon revoked", Scopes: []string{"chat"}})
			if err != nil {
				t.Fatal(err)
			}
			if err := send(platformtest.Authenticate(t, e.svc, k.Key), "shop", d.ID, ""); err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.APIKeys().Revoke(ctx, e.admin, "shop", k.ID); err != nil {
				t.Fatal(err)
			}
			_, err = e.svc.Auth().Authenticate(ctx, k.Key)
			wantCode(t, err, platform.CodeUnauthorized)
		})
	})
}
