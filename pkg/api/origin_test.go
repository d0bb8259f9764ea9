package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// TestAWidgetKeyBoundToThisServerWorksOnItsOwnPages: the widget on this
// server's own page (/widget-demo.html) reads its dialog back after a
// reload with a same-origin GET, which browsers send without Origin. The
// browser's Sec-Fetch-Site and the page's Referer name the origin instead;
// anything else still finds the key bound to its origins.
func TestAWidgetKeyBoundToThisServerWorksOnItsOwnPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.OpenSQLite(t))
	e.mustCreateTenant(t, "acme")
	ctx, op := context.Background(), platform.Operator()
	if _, _, err := e.svc.Bots().Create(ctx, op, "acme", "support", botConfig(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Versions().Publish(ctx, op, "acme", "support", 1); err != nil {
		t.Fatal(err)
	}
	self := e.srv.URL
	k, err := e.svc.APIKeys().Create(ctx, op, "acme", platform.APIKeyInput{Name: "demo", Kind: "pk", Bot: "support", Origins: []string{self}})
	if err != nil {
		t.Fatal(err)
	}
	r := e.raw(t, "POST", "/v1/tenants/acme/bots/support/dialogs", k.Key, `{}`, "Origin", self)
	var d apiclient.Dialog
	if err := json.Unmarshal([]byte(r.body), &d); err != nil || r.StatusCode != http.StatusCreated {
		t.Fatalf("create dialog: %d %s", r.StatusCode, r.body)
	}
	page := self + "/widget-demo.html?key=" + k.Key + "&tenant=acme&bot=support"
	cases := []struct {
		name    string
		headers []string
		want    int
	}{
		{"a same-origin GET from the server's own page is the page's origin",
			[]string{"Sec-Fetch-Site", "same-origin", "Referer", page}, http.StatusOK},
		{"an Origin the key allows passes as before",
			[]string{"Origin", self}, http.StatusOK},
		{"a request naming no origin at all is refused (a pk_ key is for browsers)",
			nil, http.StatusForbidden},
		{"a cross-site request without Origin is refused, whatever its Referer",
			[]string{"Sec-Fetch-Site", "cross-site", "Referer", page}, http.StatusForbidden},
		{"a same-origin claim whose page is on another host is refused",
			[]string{"Sec-Fetch-Site", "same-origin", "Referer", "https://evil.example/page"}, http.StatusForbidden},
		{"a same-origin claim without a page is refused",
			[]string{"Sec-Fetch-Site", "same-origin"}, http.StatusForbidden},
		{"another site's Origin is refused even beside a same-origin claim",
			[]string{"Origin", otherSite, "Sec-Fetch-Site", "same-origin", "Referer", page}, http.StatusForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.raw(t, "GET", "/v1/tenants/acme/dialogs/"+d.ID, k.Key, "", tc.headers...)
			if r.StatusCode != tc.want {
				t.Fatalf("%d %s; want %d", r.StatusCode, r.body, tc.want)
			}
		})
	}
	t.Run("the server's pages send their address to the server only", func(t *testing.T) {
		r := e.raw(t, "GET", "/widget-demo.html", "", "")
		if got := r.Header.Get("Referrer-Policy"); got != "same-origin" {
			t.Fatalf("Referrer-Policy %q; want same-origin", got)
		}
	})
}
