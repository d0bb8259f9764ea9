package platform_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/webhook"
)

func TestMemberChangesWriteMemberChangedWithTheirTransaction(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		_, p := e.tenantWithKey(t, "acme")
		if _, err := e.svc.Webhooks().Create(ctx, p, "acme", platform.WebhookInput{URL: "https://hooks.example.com/",
			Events: []string{webhook.MemberChanged}}); err != nil {
			t.Fatal(err)
		}
		inv, err := e.svc.Members().Invite(ctx, p, "acme", "eve@example.com", "viewer")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Members().AcceptInvite(ctx, inv.Token, "plum tractor velvet", "192.0.2.1"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Members().SetRole(ctx, p, "acme", "eve@example.com", "editor"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Members().SetRole(ctx, p, "acme", "eve@example.com", "editor"); err != nil { // no change, no event
			t.Fatal(err)
		}
		if _, err := e.svc.Members().SetRole(ctx, p, "acme", "eve@example.com", "operator"); err != nil {
			t.Fatal(err)
		}
		if err := e.svc.Members().Remove(ctx, platform.Operator(), "acme", "eve@example.com"); err != nil {
			t.Fatal(err)
		}
		type data struct {
			Change, Email, Role, By string
			Previous                string `json:"previous_role"`
		}
		var got []data
		for _, r := range outbox(t, e.store) { // each checked against its JSON Schema
			var env struct{ Data data }
			if err := json.Unmarshal([]byte(r.Body), &env); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(r.Body, inv.Token) {
				t.Fatalf("an event carries the invite token: %s", r.Body)
			}
			got = append(got, env.Data)
		}
		want := []data{
			{"invited", "eve@example.com", "viewer", p.KeyID, ""},
			{"invite_accepted", "eve@example.com", "viewer", "eve@example.com", "viewer"},
			{"role_changed", "eve@example.com", "editor", p.KeyID, "viewer"},
			{"role_changed", "eve@example.com", "operator", p.KeyID, "editor"},
			{"removed", "eve@example.com", "", "operator", "operator"},
		}
		if len(got) != len(want) {
			t.Fatalf("events %+v, want %+v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("event %d: %+v, want %+v", i, got[i], want[i])
			}
		}
	})
}
