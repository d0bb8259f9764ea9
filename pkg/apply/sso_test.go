package apply

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/apply/applytest"
	"github.com/parleyhq/parley/pkg/botconfig"
)

func TestApplySetsSingleSignOnAndTwoFactorAlikeOnBothTargets(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tg *targets) {
		const secret = "the-client-secret-from-the-environment"
		tg.env["ACME_OIDC_SECRET"] = secret
		dir := t.TempDir()
		tenantJSON := filepath.Join(dir, "acme", "tenant.json")
		applytest.WriteFile(t, tenantJSON, `{"name": "Acme", "require_two_factor": true, "sso": {"issuer": "http://127.0.0.1:9/",
			"client_id": "parley", "client_secret_env": "ACME_OIDC_SECRET", "default_role": "viewer",
			"allowed_domains": ["acme.example"], "require_sso": true}}`)
		ctx := context.Background()
		state := func(t *testing.T) (ssoFile, bool, bool) {
			t.Helper()
			db, dbSecret, _, err := tg.db.sso(ctx, "acme")
			if err != nil {
				t.Fatal(err)
			}
			api, apiSecret, _, err := tg.api.sso(ctx, "acme")
			if err != nil {
				t.Fatal(err)
			}
			db2fa, err1 := tg.db.requireTwoFactor(ctx, "acme")
			api2fa, err2 := tg.api.requireTwoFactor(ctx, "acme")
			if err1 != nil || err2 != nil || !reflect.DeepEqual(db, api) || dbSecret != apiSecret || db2fa != api2fa {
				t.Fatalf("the database has %+v (secret %t, 2fa %t), the server %+v (secret %t, 2fa %t)", db, dbSecret, db2fa, api, apiSecret, api2fa)
			}
			return db, dbSecret, db2fa
		}

		t.Run("a dry run says what would change and changes nothing", func(t *testing.T) {
			tg.applyBoth(t, dir, Options{}) // makes the tenant, so the dry run compares
			applytest.WriteFile(t, tenantJSON, `{"name": "Acme", "require_two_factor": false, "sso": {"issuer": "http://127.0.0.1:9",
				"client_id": "parley-2", "default_role": "viewer", "allowed_domains": ["acme.example"], "require_sso": true}}`)
			for _, out := range tg.applyBoth(t, dir, Options{DryRun: true}) {
				if !strings.Contains(out, "sso: would be set: provider http://127.0.0.1:9, client parley-2") ||
					!strings.Contains(out, "two-factor: would be required=false") || strings.Contains(out, secret) {
					t.Fatalf("dry run:\n%s", out)
				}
			}
			if got, _, on := state(t); got.ClientID != "parley" || !on {
				t.Fatalf("the dry run changed %+v, 2fa %t", got, on)
			}
		})

		t.Run("apply sets them, the secret from its variable and never printed", func(t *testing.T) {
			got, hasSecret, on := state(t)
			want := ssoFile{Issuer: "http://127.0.0.1:9", ClientID: "parley", DefaultRole: "viewer", AllowedDomains: []string{"acme.example"}, RequireSSO: true}
			if !reflect.DeepEqual(got, want) || !hasSecret || !on {
				t.Fatalf("sso %+v (secret %t), 2fa %t; want %+v with a secret, 2fa on", got, hasSecret, on, want)
			}
			for _, out := range tg.applyBoth(t, dir, Options{}) {
				if !strings.Contains(out, "sso: set: provider http://127.0.0.1:9, client parley-2") || strings.Contains(out, secret) {
					t.Fatalf("apply:\n%s", out)
				}
			}
			if got, hasSecret, on := state(t); got.ClientID != "parley-2" || !hasSecret || on {
				t.Fatalf("after the change: %+v (secret kept %t), 2fa %t", got, hasSecret, on)
			}
		})

		t.Run("a second apply without a secret changes nothing", func(t *testing.T) {
			for _, out := range tg.applyBoth(t, dir, Options{}) {
				if !strings.Contains(out, "sso: unchanged") || strings.Contains(out, "two-factor:") {
					t.Fatalf("second apply:\n%s", out)
				}
			}
		})
	})
}

func TestApplyRefusesAnSSOSecretWhoseVariableIsUnset(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	applytest.WriteFile(t, filepath.Join(dir, "acme", "tenant.json"), `{"name": "Acme", "sso": {"client_secret_env": "NOT_SET"}}`)
	_, problems := ReadDir(dir, func(string) string { return "" }, botconfig.Options{})
	var pointers []string
	for _, p := range problems {
		pointers = append(pointers, p.Pointer)
	}
	if want := []string{"/sso/issuer", "/sso/client_id", "/sso/client_secret_env"}; !reflect.DeepEqual(pointers, want) {
		t.Fatalf("problems %+v, want at %v", problems, want)
	}
}
