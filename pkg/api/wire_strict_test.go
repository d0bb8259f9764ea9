package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// strictGet GETs path as token and decodes the answer into out, failing on
// any field the wire type does not declare; it returns the raw body for
// wantKeys. Routes whose answer the server builds from apiclient types
// directly are pinned this way, so a renamed or added field shows.
func (e *env) strictGet(t *testing.T, path, token string, out any) string {
	t.Helper()
	r := e.raw(t, http.MethodGet, path, token, "")
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, r.StatusCode, r.body)
	}
	dec := json.NewDecoder(strings.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		t.Fatalf("GET %s: %v in %s", path, err, r.body)
	}
	return r.body
}

// wantKeys fails unless the JSON object reached through the keys of at
// (a number picks a list element) has exactly the keys want, so a field
// dropped from the wire shows too.
func wantKeys(t *testing.T, body string, want []string, at ...any) {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader([]byte(body)))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	for _, step := range at {
		switch s := step.(type) {
		case string:
			v = v.(map[string]any)[s]
		case int:
			v = v.([]any)[s]
		}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v in %s is %T, not an object", at, body, v)
	}
	var got []string
	for k := range obj {
		got = append(got, k)
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("%v has keys %v, want %v", at, got, want)
	}
}

func TestATenantGoesOverTheWireWithExactlyItsFields(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		e.mustCreateTenant(t, "acme")
		tenantKeys := []string{"id", "slug", "name", "retention_days", "idle_minutes", "require_two_factor", "created_at"}

		var one apiclient.Tenant
		wantKeys(t, e.strictGet(t, "/v1/tenants/acme", testPlatformToken, &one), tenantKeys)
		var list apiclient.TenantList
		wantKeys(t, e.strictGet(t, "/v1/tenants", testPlatformToken, &list), tenantKeys, "tenants", 0)
		var me apiclient.Me
		body := e.strictGet(t, "/v1/auth/me", signIn(t, e, "acme").Value, &me)
		wantKeys(t, body, []string{"tenant", "role"}, "memberships", 0)
		wantKeys(t, body, tenantKeys, "memberships", 0, "tenant")
	})
}
