package auth_test

import (
	"fmt"
	"testing"

	"github.com/parleyhq/parley/configs"
	"github.com/parleyhq/parley/pkg/auth"
)

var (
	allObjects = []string{auth.ObjTenant, auth.ObjMembers, auth.ObjKeys, auth.ObjSecrets,
		auth.ObjBots, auth.ObjVersions, auth.ObjDialogs, auth.ObjUsage, auth.ObjWebhooks}
	allActions = []string{auth.ActRead, auth.ActWrite, auth.ActPublish, auth.ActChat, auth.ActErase, auth.ActExport, auth.ActOperate}
)

// allowed is the whole intended permission table: each subject's grants,
// written out flat (inheritance applied by hand) so that a policy change
// that widens or narrows anything fails here and is reviewed.
var allowed = map[string][]string{
	auth.RoleViewer:   {"tenant/read", "members/read", "bots/read", "versions/read", "dialogs/read", "usage/read"},
	auth.RoleOperator: {"tenant/read", "members/read", "bots/read", "versions/read", "dialogs/read", "usage/read", "dialogs/operate"},
	auth.RoleEditor: {"tenant/read", "members/read", "bots/read", "versions/read", "dialogs/read", "usage/read", "dialogs/operate",
		"bots/write", "versions/write", "dialogs/write", "dialogs/chat", "secrets/read"},
	auth.RoleAdmin: {"tenant/read", "members/read", "bots/read", "versions/read", "dialogs/read", "usage/read", "dialogs/operate",
		"bots/write", "versions/write", "dialogs/write", "dialogs/chat", "secrets/read",
		"versions/publish", "keys/read", "keys/write", "secrets/write", "members/write", "dialogs/erase", "dialogs/export", "webhooks/read", "webhooks/write"},
	auth.RoleOwner: {"tenant/read", "members/read", "bots/read", "versions/read", "dialogs/read", "usage/read", "dialogs/operate",
		"bots/write", "versions/write", "dialogs/write", "dialogs/chat", "secrets/read",
		"versions/publish", "keys/read", "keys/write", "secrets/write", "members/write", "dialogs/erase", "dialogs/export", "webhooks/read", "webhooks/write", "tenant/write"},
	auth.ScopeSubject(auth.ScopeAdmin): {"tenant/read", "members/read", "bots/read", "versions/read", "dialogs/read", "usage/read", "dialogs/operate",
		"bots/write", "versions/write", "dialogs/write", "dialogs/chat", "secrets/read",
		"versions/publish", "keys/read", "keys/write", "secrets/write", "members/write", "dialogs/erase", "dialogs/export", "webhooks/read", "webhooks/write"},
	auth.ScopeSubject(auth.ScopeChat): {"dialogs/chat"},
	"stranger":                        {},
	"scope:unknown":                   {},
}

func TestAuthorizerEveryRoleScopeObjectAction(t *testing.T) {
	a, err := auth.NewAuthorizer()
	if err != nil {
		t.Fatal(err)
	}
	for subject, grants := range allowed {
		want := map[string]bool{}
		for _, g := range grants {
			want[g] = true
		}
		for _, obj := range allObjects {
			for _, act := range allActions {
				verb := "may not"
				if want[obj+"/"+act] {
					verb = "may"
				}
				name := fmt.Sprintf("%s %s %s %s", subject, verb, act, obj)
				t.Run(name, func(t *testing.T) {
					// Twice per tenant: the second answer is the remembered one.
					for _, tenant := range []string{"ten_a", "ten_b", "ten_a", "ten_b"} {
						if got := a.Can(subject, tenant, obj, act); got != want[obj+"/"+act] {
							t.Fatalf("Can(%s, %s, %s, %s) = %v", subject, tenant, obj, act, got)
						}
					}
				})
			}
		}
	}
}

func TestAuthorizerTenantSpecificPolicy(t *testing.T) {
	// A policy line for one domain applies there only: the model really has
	// domains, so operators can grant per-tenant exceptions.
	policy := "p, viewer, ten_a, keys, read\ng, editor, viewer, *\n"
	a, err := auth.NewAuthorizerFrom(configs.RBACModel, policy)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name            string
		subject, tenant string
		want            bool
	}{
		{"a viewer reads keys in the tenant the line names", auth.RoleViewer, "ten_a", true},
		{"a viewer does not read keys in another tenant", auth.RoleViewer, "ten_b", false},
		{"an editor inherits the grant in that tenant", auth.RoleEditor, "ten_a", true},
	}
	for _, tc := range append(cases, cases...) { // again, from what the authorizer remembers
		t.Run(tc.name, func(t *testing.T) {
			if got := a.Can(tc.subject, tc.tenant, auth.ObjKeys, auth.ActRead); got != tc.want {
				t.Fatalf("got %v", got)
			}
		})
	}
}

func TestAuthorizerRefusesABrokenModel(t *testing.T) {
	if _, err := auth.NewAuthorizerFrom("[request_definition]\nr = sub\n", "p, a"); err == nil {
		t.Fatal("broken model accepted")
	}
}
