package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// step is one audited change made through the API, and the entry it must
// leave.
type step struct {
	do             func() error
	action, target string
}

func TestEveryAuditedChangeLeavesAnEntryWithWhoWhatAndWhence(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ctx := context.Background()
		admin := e.client(e.mustCreateTenant(t, "acme"))
		beta := e.client(e.mustCreateTenant(t, "beta"))
		me, err := admin.Me(ctx)
		if err != nil {
			t.Fatal(err)
		}
		const secretValue = "hunter2-very-secret-value"
		var keyID, hookID, hookSecret string
		config := func(name string) json.RawMessage {
			return json.RawMessage(`{"basic_settings": {"name": "` + name + `"}}`)
		}
		steps := []step{
			{func() error {
				k, err := admin.CreateAPIKey(ctx, "acme", apiclient.CreateAPIKeyRequest{Name: "ci", Scopes: []string{"chat"}})
				keyID = k.ID
				return err
			}, "key.created", ""},
			{func() error { _, err := admin.RevokeAPIKey(ctx, "acme", keyID); return err }, "key.revoked", ""},
			{func() error { _, err := admin.PutSecret(ctx, "acme", "crm_token", secretValue); return err }, "secret.set", "crm_token"},
			{func() error { return admin.DeleteSecret(ctx, "acme", "crm_token") }, "secret.deleted", "crm_token"},
			{func() error { _, err := admin.CreateBot(ctx, "acme", "support", config("Support")); return err }, "bot.created", "support"},
			{func() error { _, err := admin.Publish(ctx, "acme", "support", 1); return err }, "version.published", "support"},
			{func() error {
				if _, err := admin.CreateVersion(ctx, "acme", "support", config("Support 2")); err != nil {
					return err
				}
				_, err := admin.Publish(ctx, "acme", "support", 2)
				return err
			}, "version.published", "support"},
			{func() error { _, err := admin.Publish(ctx, "acme", "support", 1); return err }, "version.rolled_back", "support"},
			{func() error {
				d, err := admin.CreateDialog(ctx, "acme", "support", apiclient.CreateDialogRequest{UserID: "u-1"})
				if err != nil {
					return err
				}
				return admin.Do(ctx, "DELETE", "/v1/tenants/acme/dialogs/"+d.ID, nil, nil)
			}, "dialog.deleted", ""},
			{func() error {
				if _, err := admin.CreateDialog(ctx, "acme", "support", apiclient.CreateDialogRequest{UserID: "erase-me@example.com"}); err != nil {
					return err
				}
				return admin.Do(ctx, "DELETE", "/v1/tenants/acme/end-users/erase-me@example.com", nil, nil)
			}, "end_user.erased", ""}, // a keyed digest: erase_test.go
			{func() error { return admin.Do(ctx, "GET", "/v1/tenants/acme/dialogs/export", nil, nil) }, "dialogs.exported", ""},
			{func() error {
				return admin.Do(ctx, "PATCH", "/v1/tenants/acme", apiclient.UpdateTenantRequest{RetentionDays: ptr(30)}, nil)
			}, "tenant.updated", "acme"},
			{func() error { _, err := admin.SetCanary(ctx, "acme", "support", 2, 10); return err }, "canary.set", "support"},
			{func() error { _, err := admin.DropCanary(ctx, "acme", "support"); return err }, "canary.dropped", "support"},
			{func() error {
				h, err := admin.CreateWebhook(ctx, "acme", apiclient.CreateWebhookRequest{URL: "https://hooks.example.com/in", Events: []string{"*"}})
				hookID, hookSecret = h.ID, h.Secret
				return err
			}, "webhook.created", ""},
			{func() error {
				_, err := admin.UpdateWebhook(ctx, "acme", hookID, apiclient.UpdateWebhookRequest{Enabled: ptr(false)})
				return err
			}, "webhook.updated", ""},
			{func() error { _, err := admin.RotateWebhookSecret(ctx, "acme", hookID, ""); return err }, "webhook.secret_rotated", ""},
			{func() error { return admin.DeleteWebhook(ctx, "acme", hookID) }, "webhook.deleted", ""},
			{func() error {
				if _, err := admin.PutSecret(ctx, "acme", "llm_key", secretValue); err != nil {
					return err
				}
				_, err := admin.PutProvider(ctx, "acme", "mine", apiclient.PutProviderRequest{Kind: "openai", APIKeySecret: "llm_key"})
				return err
			}, "provider.set", "mine"},
			{func() error { return admin.DeleteProvider(ctx, "acme", "mine") }, "provider.deleted", "mine"},
			{func() error {
				_, err := admin.PutIdentity(ctx, "acme", apiclient.PutIdentityRequest{Secret: strings.Repeat("k", 40)})
				return err
			}, "identity.set", ""},
			{func() error { return admin.DeleteIdentity(ctx, "acme") }, "identity.deleted", ""},
			{func() error { _, err := admin.InviteMember(ctx, "acme", "eve@example.com", "viewer"); return err }, "member.invited", "eve@example.com"},
			{func() error { _, err := admin.SetMemberRole(ctx, "acme", "eve@example.com", "editor"); return err }, "member.role_changed", "eve@example.com"},
			{func() error { return admin.RemoveMember(ctx, "acme", "eve@example.com") }, "member.removed", "eve@example.com"},
		}
		for _, s := range steps {
			before := auditEntries(t, admin, "acme", apiclient.AuditQuery{})
			if err := s.do(); err != nil {
				t.Fatalf("%s: %v", s.action, err)
			}
			after := auditEntries(t, admin, "acme", apiclient.AuditQuery{})
			got := after[0]
			if len(after) <= len(before) || got.Action != s.action {
				t.Fatalf("after %s the newest entry is %+v", s.action, got)
			}
			if s.target != "" && got.Target != s.target {
				t.Errorf("%s: target %q, want %q", s.action, got.Target, s.target)
			}
			if got.Actor.Kind != "key" || got.Actor.ID != me.Key.ID || got.Actor.Name != me.Key.Name {
				t.Errorf("%s: actor %+v, want the admin key %s (%s)", s.action, got.Actor, me.Key.ID, me.Key.Name)
			}
			if got.IP != "127.0.0.1" || time.Since(got.At) > time.Minute {
				t.Errorf("%s: ip %q at %v, want 127.0.0.1 just now", s.action, got.IP, got.At)
			}
		}
		all := auditEntries(t, admin, "acme", apiclient.AuditQuery{})
		raw, _ := json.Marshal(all)
		t.Run("no secret value or webhook secret is in the log", func(t *testing.T) {
			for _, secret := range []string{secretValue, hookSecret, strings.Repeat("k", 40), "erase-me@example.com"} {
				if strings.Contains(string(raw), secret) {
					t.Fatalf("the audit log holds a secret: %s", raw)
				}
			}
		})
		t.Run("the log filters by action, actor and time", func(t *testing.T) {
			sets := auditEntries(t, admin, "acme", apiclient.AuditQuery{Action: "secret.set"})
			if len(sets) != 2 {
				t.Fatalf("secret.set entries: %+v, want 2", sets)
			}
			if byKey := auditEntries(t, admin, "acme", apiclient.AuditQuery{Actor: me.Key.Name}); len(byKey) != len(all) {
				t.Fatalf("by actor name: %d entries, want %d", len(byKey), len(all))
			}
			if none := auditEntries(t, admin, "acme", apiclient.AuditQuery{Actor: "somebody-else"}); len(none) != 0 {
				t.Fatalf("by another actor: %+v", none)
			}
			if later := auditEntries(t, admin, "acme", apiclient.AuditQuery{Since: time.Now().Add(time.Hour)}); len(later) != 0 {
				t.Fatalf("since an hour from now: %+v", later)
			}
		})
		t.Run("the log pages newest first without gaps or repeats", func(t *testing.T) {
			var ids []string
			for cursor := ""; ; {
				var page apiclient.AuditLog
				if err := admin.Do(ctx, "GET", "/v1/tenants/acme/audit-log?limit=4&cursor="+cursor, nil, &page); err != nil {
					t.Fatal(err)
				}
				for _, en := range page.Entries {
					ids = append(ids, en.ID)
				}
				if cursor = page.NextCursor; cursor == "" {
					break
				}
			}
			want := make([]string, len(all))
			for i, en := range all {
				want[i] = en.ID
			}
			if !slices.Equal(ids, want) {
				t.Fatalf("paged ids %v, want %v", ids, want)
			}
		})
		t.Run("another tenant neither reads nor shares the log", func(t *testing.T) {
			if _, err := beta.AuditLog(ctx, "acme", apiclient.AuditQuery{}); apiCode(err) != http.StatusNotFound {
				t.Fatalf("beta reading acme's log: %v, want 404", err)
			}
			if _, err := beta.PutSecret(ctx, "beta", "own", "v"); err != nil {
				t.Fatal(err)
			}
			for _, en := range auditEntries(t, admin, "acme", apiclient.AuditQuery{Action: "secret.set"}) {
				if en.Target == "own" {
					t.Fatalf("beta's change is in acme's log: %+v", en)
				}
			}
		})
		t.Run("a refused change leaves no entry", func(t *testing.T) {
			n := len(auditEntries(t, admin, "acme", apiclient.AuditQuery{}))
			if _, err := admin.RevokeAPIKey(ctx, "acme", "key_00000000000000000000000000"); apiCode(err) != http.StatusNotFound {
				t.Fatalf("revoking no key: %v", err)
			}
			if _, err := admin.SetMemberRole(ctx, "acme", "owner@acme.test", "viewer"); apiCode(err) != http.StatusForbidden {
				t.Fatalf("an admin key demoting the owner: %v", err)
			}
			if got := len(auditEntries(t, admin, "acme", apiclient.AuditQuery{})); got != n {
				t.Fatalf("%d entries after refused changes, want %d", got, n)
			}
		})
		t.Run("a session's change names the user and accepting an invite is logged", func(t *testing.T) {
			owner := e.client(signIn(t, e, "acme").Value)
			inv, err := owner.InviteMember(ctx, "acme", "ada@example.com", "viewer")
			if err != nil {
				t.Fatal(err)
			}
			acceptInvite(t, e, inv.InviteToken, "plum tractor velvet")
			entries := auditEntries(t, admin, "acme", apiclient.AuditQuery{})
			if a := entries[0]; a.Action != "member.invite_accepted" || a.Actor.Kind != "user" || a.Actor.Name != "ada@example.com" {
				t.Fatalf("newest entry %+v, want ada accepting", a)
			}
			if a := entries[1]; a.Action != "member.invited" || a.Actor.Kind != "user" || a.Actor.Name != "owner@acme.test" {
				t.Fatalf("second entry %+v, want the owner's invitation", a)
			}
		})
	})
}

// auditEntries reads every entry of the tenant's log that q selects,
// newest first.
func auditEntries(t *testing.T, c *apiclient.Client, tenant string, q apiclient.AuditQuery) []apiclient.AuditEntry {
	t.Helper()
	var all []apiclient.AuditEntry
	for {
		page, err := c.AuditLog(context.Background(), tenant, q)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page.Entries...)
		if q.Cursor = page.NextCursor; q.Cursor == "" {
			return all
		}
	}
}
