package apiclient_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
)

func TestClientErrorsCarryStatusAndCodeWhateverTheBody(t *testing.T) {
	cases := []struct {
		name, contentType, body string
		status                  int
		wantCode                string
		wantDetails             int
	}{
		{"an API error is decoded with its details", "application/json",
			`{"error": {"code": "invalid", "message": "the config is invalid", "details": [{"pointer": "/llm/model", "message": "unknown model"}]}}`,
			422, "invalid", 1},
		{"a proxy's HTML page still yields the status", "text/html", `<h1>Bad Gateway</h1>`, 502, "http_502", 0},
		{"an empty body still yields the status", "", "", 503, "http_503", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.contentType != "" {
					w.Header().Set("Content-Type", tc.contentType)
				}
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			_, err := apiclient.New(srv.URL, "sk_test").GetTenant(context.Background(), "acme")
			var apiErr *apiclient.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("got %v, want an *apiclient.Error", err)
			}
			if apiErr.Status != tc.status || apiErr.Code != tc.wantCode || len(apiErr.Details) != tc.wantDetails {
				t.Errorf("error = %+v, want status %d, code %s, %d details", apiErr, tc.status, tc.wantCode, tc.wantDetails)
			}
		})
	}
}

func TestClientSendsItsCredentialAndEscapesPathSegments(t *testing.T) {
	var gotAuth, gotPath, gotCSRF string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotPath, gotCSRF = r.Header.Get("Authorization"), r.URL.EscapedPath(), r.Header.Get(apiclient.HeaderCSRF)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"number": 3}`))
	}))
	defer srv.Close()
	v, err := apiclient.New(srv.URL+"/", "sk_abc").GetVersion(context.Background(), "acme", "a/b", 3)
	if err != nil || v.Number != 3 {
		t.Fatalf("GetVersion = %+v, %v", v, err)
	}
	if gotAuth != "Bearer sk_abc" || gotCSRF == "" {
		t.Errorf("Authorization %q, %s %q; want the bearer key and the CSRF marker", gotAuth, apiclient.HeaderCSRF, gotCSRF)
	}
	if want := "/v1/tenants/acme/bots/a%2Fb/versions/3"; gotPath != want {
		t.Errorf("path %q, want %q", gotPath, want)
	}
}
