package platform_test

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// TestNoCredentialInPlainTextAtRest creates keys, a secret and a user, then
// reads every column of every row of every table and looks for any of those
// credentials in the clear.
func TestNoCredentialInPlainTextAtRest(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		const (
			secretValue = "s3cr3t-crm-value-91b2"
			password    = "owner-password-77"
		)
		tn, first, err := e.svc.Tenants().Create(ctx, platform.Operator(), platform.CreateTenantInput{
			Slug: "acme", OwnerEmail: "ada@acme.example", OwnerPassword: password})
		if err != nil {
			t.Fatal(err)
		}
		admin := e.authenticate(t, first.Key)
		e.bot(t, admin, tn.ID, "widget")
		sk, err := e.svc.APIKeys().Create(ctx, admin, tn.ID, platform.APIKeyInput{Name: "sk", Scopes: []string{"chat"}})
		if err != nil {
			t.Fatal(err)
		}
		pk, err := e.svc.APIKeys().Create(ctx, admin, tn.ID, platform.APIKeyInput{Name: "pk", Bot: "widget", Origins: []string{"https://a.example"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Secrets().Put(ctx, admin, tn.ID, "crm", secretValue); err != nil {
			t.Fatal(err)
		}
		sess, err := e.svc.Auth().Login(ctx, "ada@acme.example", password)
		if err != nil {
			t.Fatal(err)
		}

		// The random part of each key: its prefix and last four are stored
		// for display on purpose, so look for the middle.
		middle := func(k string) string { return k[7 : len(k)-4] }
		needles := map[string]string{
			"first admin key": middle(first.Key), "sk key": middle(sk.Key),
			"secret value": secretValue, "password": password, "session token": sess.Token[4:],
		}
		cells := storetest.EveryCell(t, e.store)
		if len(cells) < 20 {
			t.Fatalf("only %d cells read; the dump is not looking at the data", len(cells))
		}
		// A pk_ key is public by design, written into its site's pages, and
		// kept whole so the admin UI can show it again; it is stored only in
		// its own column, never in a server key's.
		t.Run("the pk key is kept only as a publishable key", func(t *testing.T) {
			for where, cell := range cells {
				if strings.Contains(cell, middle(pk.Key)) && !strings.HasSuffix(where, "column publishable") {
					t.Fatalf("found the pk key in %s", where)
				}
			}
		})
		for what, needle := range needles {
			t.Run("the "+what+" is not stored in plain text", func(t *testing.T) {
				for where, cell := range cells {
					if strings.Contains(cell, needle) {
						t.Fatalf("found the %s in %s", what, where)
					}
				}
			})
		}
	})
}
