package api_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// TestAPublishableKeyIsListedWithItsValueAndItsOriginsCanBeChanged: a pk_
// key's whole value is listed (it is public), an sk_ key's never is, and
// PATCH replaces a pk_ key's origins, checked like a new key's, audited,
// and in force at the next request.
func TestAPublishableKeyIsListedWithItsValueAndItsOriginsCanBeChanged(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ctx := context.Background()
		admin := e.client(e.mustCreateTenant(t, "acme"))
		other := e.client(e.mustCreateTenant(t, "beta"))
		if _, err := admin.CreateBot(ctx, "acme", "helper", botConfig(t)); err != nil {
			t.Fatal(err)
		}
		pk, err := admin.CreateAPIKey(ctx, "acme", apiclient.CreateAPIKeyRequest{Name: "widget", Kind: "pk", Bot: "helper", Origins: []string{"https://shop.example"}})
		if err != nil {
			t.Fatal(err)
		}
		sk, err := admin.CreateAPIKey(ctx, "acme", apiclient.CreateAPIKeyRequest{Name: "ci", Scopes: []string{"chat"}})
		if err != nil {
			t.Fatal(err)
		}

		t.Run("the list shows the pk key's value and no sk key's", func(t *testing.T) {
			list, err := admin.ListAPIKeys(ctx, "acme", "")
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range list.APIKeys {
				switch {
				case k.ID == pk.ID && k.Key != pk.Key:
					t.Errorf("the pk key is listed with %q; want its value", k.Key)
				case k.Kind == "sk" && k.Key != "":
					t.Errorf("sk key %s is listed with a value", k.ID)
				}
			}
		})

		origins := func(list ...string) apiclient.UpdateAPIKeyRequest {
			list = append([]string{}, list...) // none is [], not null
			return apiclient.UpdateAPIKeyRequest{Origins: &list}
		}
		cases := []struct {
			name    string
			client  *apiclient.Client
			tenant  string
			id      string
			req     apiclient.UpdateAPIKeyRequest
			status  int
			pointer string
		}{
			{"an origin with a path is refused at its pointer", admin, "acme", pk.ID, origins("https://shop.example", "https://new.example/shop"), 422, "/origins/1"},
			{"no origin at all is refused", admin, "acme", pk.ID, origins(), 422, "/origins"},
			{"an sk key has no origins", admin, "acme", sk.ID, origins("https://shop.example"), 422, "/origins"},
			{"another tenant's key is not found", other, "beta", pk.ID, origins("https://evil.example"), 404, ""},
			{"an unknown key is not found", admin, "acme", "key_0000000000000000000000000000", origins("https://shop.example"), 404, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, err := tc.client.UpdateAPIKey(ctx, tc.tenant, tc.id, tc.req)
				wantAPIError(t, err, tc.status, tc.pointer)
			})
		}

		t.Run("new origins are saved, audited and in force at once", func(t *testing.T) {
			// Used once, the key is in the server's cache.
			if status := e.raw(t, "GET", "/v1/auth/me", pk.Key, "", "Origin", "https://shop.example").StatusCode; status != http.StatusOK {
				t.Fatalf("from its origin the key gets %d", status)
			}
			got, err := admin.UpdateAPIKey(ctx, "acme", pk.ID, origins("https://new.example"))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Origins, []string{"https://new.example"}) || got.Key != pk.Key {
				t.Errorf("the key now reads %+v", got)
			}
			for origin, want := range map[string]int{"https://shop.example": http.StatusForbidden, "https://new.example": http.StatusOK} {
				if status := e.raw(t, "GET", "/v1/auth/me", pk.Key, "", "Origin", origin).StatusCode; status != want {
					t.Errorf("from %s the key gets %d; want %d", origin, status, want)
				}
			}
			log, err := admin.AuditLog(ctx, "acme", apiclient.AuditQuery{Action: "key.updated"})
			if err != nil {
				t.Fatal(err)
			}
			if len(log.Entries) != 1 || log.Entries[0].Target != pk.ID || !strings.Contains(string(log.Entries[0].Detail), "https://shop.example") {
				t.Errorf("the audit log has %+v; want one key.updated entry with the previous origins", log.Entries)
			}
		})
	})
}
