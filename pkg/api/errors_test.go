package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

func TestErrorsAreJSONWithTheStatusOfTheirCode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.OpenSQLite(t))
	key := e.mustCreateTenant(t, "acme")
	if _, err := e.client(key).CreateBot(context.Background(), "acme", "taken", botConfig(t)); err != nil {
		t.Fatal(err)
	}
	bigConfig := `{"config": {"basic_settings": {"name": "Big", "background": "` + strings.Repeat("x", 70<<10) + `"}}}`
	cases := []struct {
		name, method, path, token, body string
		status                          int
		code, pointer                   string
	}{
		{"an unknown route is a 404", "GET", "/v1/nothing-here", "", "", 404, apiclient.CodeNotFound, ""},
		{"a wrong method is a 405", "PUT", "/healthz", "", "", 405, apiclient.CodeMethodNotAllowed, ""},
		{"a request without credentials is a 401", "GET", "/v1/tenants/acme/bots", "", "", 401, apiclient.CodeUnauthorized, ""},
		{"an unknown key is a 401", "GET", "/v1/tenants/acme/bots", "sk_notakey", "", 401, apiclient.CodeUnauthorized, ""},
		{"malformed JSON is a 400", "POST", "/v1/tenants/acme/bots", key, `{"slug": `, 400, apiclient.CodeBadRequest, ""},
		{"an empty body is a 400", "POST", "/v1/tenants/acme/bots", key, "", 400, apiclient.CodeBadRequest, ""},
		{"an unknown field is a 400", "POST", "/v1/tenants/acme/api-keys", key, `{"name": "x", "scope": ["admin"]}`, 400, apiclient.CodeBadRequest, ""},
		{"a field of the wrong type is a 400 pointing at it", "POST", "/v1/tenants/acme/bots/taken/publish", key, `{"version": "one"}`, 400, apiclient.CodeBadRequest, "/version"},
		{"a body over the limit is a 413", "POST", "/v1/tenants/acme/bots", key, bigConfig, 413, apiclient.CodeTooLarge, ""},
		{"an invalid key request is a 422 pointing at the field", "POST", "/v1/tenants/acme/api-keys", key, `{"name": "x", "scopes": ["root"]}`, 422, apiclient.CodeInvalid, "/scopes/0"},
		{"an invalid config is a 422 pointing into the config", "POST", "/v1/tenants/acme/bots/taken/versions", key, `{"config": {"basic_settings": {}}}`, 422, apiclient.CodeInvalid, "/basic_settings/name"},
		{"a taken slug is a 409", "POST", "/v1/tenants/acme/bots", key, `{"slug": "taken", "config": {"basic_settings": {"name": "Again"}}}`, 409, apiclient.CodeConflict, ""},
		{"a version number that is not a number is a 404", "GET", "/v1/tenants/acme/bots/taken/versions/latest", key, "", 404, apiclient.CodeNotFound, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.raw(t, tc.method, tc.path, tc.token, tc.body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tc.status, resp.body)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("content type %q, want JSON", ct)
			}
			var got struct {
				Error struct {
					Code    string             `json:"code"`
					Message string             `json:"message"`
					Details []apiclient.Detail `json:"details"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(resp.body), &got); err != nil {
				t.Fatalf("body is not the error shape: %s", resp.body)
			}
			if got.Error.Code != tc.code || got.Error.Message == "" || got.Error.Details == nil {
				t.Errorf("error = %s, want code %q, a message and a details list", resp.body, tc.code)
			}
			if tc.pointer != "" && !hasPointer(got.Error.Details, tc.pointer) {
				t.Errorf("details %+v do not point at %s", got.Error.Details, tc.pointer)
			}
		})
	}
}

func hasPointer(ds []apiclient.Detail, p string) bool {
	for _, d := range ds {
		if d.Pointer == p {
			return true
		}
	}
	return false
}

// TestInternalErrorsReachClientsOnlyAsInternal breaks the database under a
// running server: clients get a bare 500 and 503, the log gets the cause.
func TestInternalErrorsReachClientsOnlyAsInternal(t *testing.T) {
	t.Parallel()
	st := storetest.OpenSQLite(t)
	e := newEnv(t, st)
	key := e.mustCreateTenant(t, "acme")
	st.Close()

	resp := e.raw(t, "GET", "/v1/tenants/acme/bots", key, "")
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500; body %s", resp.StatusCode, resp.body)
	}
	for _, leak := range []string{"sql", "database", "closed", "store"} {
		if strings.Contains(strings.ToLower(resp.body), leak) {
			t.Errorf("the client sees internal text %q: %s", leak, resp.body)
		}
	}
	if !strings.Contains(resp.body, `"code":"internal"`) {
		t.Errorf("body %s, want code internal", resp.body)
	}
	if ready := e.raw(t, "GET", "/readyz", "", ""); ready.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz with the database gone: %d, want 503", ready.StatusCode)
	}
	if health := e.raw(t, "GET", "/healthz", "", ""); health.StatusCode != http.StatusOK {
		t.Errorf("/healthz with the database gone: %d, want 200: the process is alive", health.StatusCode)
	}
}
