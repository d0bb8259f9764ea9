package platform_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/platform"
)

func TestSecretsAreWriteOnly(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		tn, admin := e.tenantWithKey(t, "acme")
		const value = "crm-token-7f3a9c"
		if _, err := e.svc.Secrets().Put(ctx, admin, tn.Slug, "crm_token", value); err != nil {
			t.Fatal(err)
		}
		t.Run("the list has names and no values", func(t *testing.T) {
			list, err := e.svc.Secrets().ListNames(ctx, admin, tn.Slug)
			if err != nil || len(list) != 1 || list[0].Name != "crm_token" {
				t.Fatalf("list %+v, %v", list, err)
			}
			b, _ := json.Marshal(list)
			if strings.Contains(string(b), value) {
				t.Fatal("the list reveals the value")
			}
		})
		t.Run("the runtime gets the value as a template variable", func(t *testing.T) {
			vars, err := e.svc.Secrets().Vars(ctx, tn.ID, []string{"crm_token"})
			if err != nil || vars["secrets.crm_token"] != value {
				t.Fatalf("vars %v, %v", len(vars), err)
			}
		})
		t.Run("the runtime decrypts only the secrets a bot uses", func(t *testing.T) {
			if _, err := e.svc.Secrets().Put(ctx, admin, tn.Slug, "unused", "not for this bot"); err != nil {
				t.Fatal(err)
			}
			vars, err := e.svc.Secrets().Vars(ctx, tn.ID, []string{"crm_token", "missing"})
			if err != nil || len(vars) != 1 || vars["secrets.crm_token"] != value {
				t.Fatalf("vars %v, %v", slices.Collect(maps.Keys(vars)), err)
			}
			if vars, err := e.svc.Secrets().Vars(ctx, tn.ID, nil); err != nil || len(vars) != 0 {
				t.Fatalf("a bot without secrets got %d, %v", len(vars), err)
			}
		})
		t.Run("putting again replaces the value", func(t *testing.T) {
			if _, err := e.svc.Secrets().Put(ctx, admin, tn.Slug, "crm_token", "v2"); err != nil {
				t.Fatal(err)
			}
			vars, _ := e.svc.Secrets().Vars(ctx, tn.ID, []string{"crm_token"})
			if vars["secrets.crm_token"] != "v2" {
				t.Fatal("value not replaced")
			}
		})
		t.Run("a deleted secret is gone and deleting it again is not found", func(t *testing.T) {
			if err := e.svc.Secrets().Delete(ctx, admin, tn.Slug, "crm_token"); err != nil {
				t.Fatal(err)
			}
			wantCode(t, e.svc.Secrets().Delete(ctx, admin, tn.Slug, "crm_token"), platform.CodeNotFound)
			vars, _ := e.svc.Secrets().Vars(ctx, tn.ID, []string{"crm_token"})
			if len(vars) != 0 {
				t.Fatalf("vars %d", len(vars))
			}
		})
		invalid := []struct {
			name, secret, value string
			pointers            []string
		}{
			{"a name with a dash", "crm-token", "v", []string{"/name"}},
			{"a name starting with a digit", "1token", "v", []string{"/name"}},
			{"an empty value", "ok", "", []string{"/value"}},
			{"an oversized value", "ok", strings.Repeat("x", platform.MaxSecretSize+1), []string{"/value"}},
		}
		for _, tc := range invalid {
			t.Run(fmt.Sprintf("a secret with %s is invalid", tc.name), func(t *testing.T) {
				_, err := e.svc.Secrets().Put(ctx, admin, tn.Slug, tc.secret, tc.value)
				wantInvalid(t, err, tc.pointers...)
			})
		}
	})
}
