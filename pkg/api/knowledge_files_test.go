package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/knowledge/extract/extracttest"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// TestACitedUploadLinksToTheFileWhileTheLinkIsValid: a citation of an
// uploaded PDF carries a signed link that opens the file at the cited
// page for anyone holding it, until it expires; a changed link, an
// expired one and one signed for another tenant open nothing.
func TestACitedUploadLinksToTheFileWhileTheLinkIsValid(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newKBEnv(t, st)
		ctx := context.Background()
		cl := e.client(e.key)
		manual := extracttest.PDF("Tent pole repair\nSplint the broken tent pole with the aluminium sleeve.")
		if _, _, err := cl.AddFileSource(ctx, "acme", "help", "manual.pdf", bytes.NewReader(manual), nil, ""); err != nil {
			t.Fatal(err)
		}
		e.index(t)
		e.bot(t, "helper", `{"bases": ["help"], "mode": "auto"}`)
		d := e.dialog(t, "helper", e.key, `{}`)
		e.llm.Enqueue(llmtest.ServerReply{Text: "Splint it [1] [2] [3] [4]."})
		turn, err := cl.SendMessage(ctx, "acme", d, "How do I repair a broken tent pole?")
		if err != nil {
			t.Fatal(err)
		}
		var cited apiclient.Citation
		for _, c := range turn.Messages[len(turn.Messages)-1].Citations {
			if c.Title == "manual.pdf" {
				cited = c
			}
		}
		link, page, _ := strings.Cut(cited.URL, "#")
		if !strings.HasPrefix(link, "/v1/knowledge/files/") || page != "page=1" || cited.Locator != "p. 1" {
			t.Fatalf("the PDF's citation is %+v, want a signed link at #page=1", cited)
		}
		if sys := e.llm.LastRequest().System(); strings.Contains(sys, link) {
			t.Errorf("the model was shown the signed link:\n%s", sys)
		}

		t.Run("the link opens the PDF, with no credential", func(t *testing.T) {
			r := e.raw(t, "GET", link, "", "")
			if r.StatusCode != http.StatusOK || r.body != string(manual) {
				t.Fatalf("%d, %d bytes, want 200 and the uploaded %d bytes", r.StatusCode, len(r.body), len(manual))
			}
			if ct, cd := r.Header.Get("Content-Type"), r.Header.Get("Content-Disposition"); ct != "application/pdf" || cd != `inline; filename=manual.pdf` {
				t.Errorf("Content-Type %q, Content-Disposition %q", ct, cd)
			}
		})
		t.Run("a changed link is refused", func(t *testing.T) {
			parts := strings.Split(strings.TrimPrefix(link, "/v1/knowledge/files/"), ".")
			expires, err := strconv.ParseInt(parts[3], 10, 64)
			if err != nil {
				t.Fatalf("the link's expiry %q: %v", parts[3], err)
			}
			later := strconv.FormatInt(expires+1, 10) // not ...9 again when it ended in 9
			for name, token := range map[string]string{
				"a later expiry":  strings.Join([]string{parts[0], parts[1], parts[2], later, parts[4]}, "."),
				"another source":  strings.Join([]string{parts[0], parts[1], "ks_other", parts[3], parts[4]}, "."),
				"a cut signature": strings.Join(parts[:4], ".") + "." + parts[4][:10],
				"no signature":    strings.Join(parts[:4], "."),
			} {
				r := e.raw(t, "GET", "/v1/knowledge/files/"+token, "", "")
				if r.StatusCode != http.StatusForbidden || !strings.Contains(r.body, "this link to a file is not valid") {
					t.Errorf("%s: %d %s, want 403 saying the link is not valid", name, r.StatusCode, r.body)
				}
			}
		})
		t.Run("a link signed for another tenant does not open this tenant's file", func(t *testing.T) {
			e.mustCreateTenant(t, "rival")
			rival, err := e.svc.Tenants().Get(ctx, platform.Operator(), "rival")
			if err != nil {
				t.Fatal(err)
			}
			parts := strings.Split(strings.TrimPrefix(link, "/v1/knowledge/files/"), ".")
			forged := e.svc.Knowledge().FileLink(rival.ID, parts[1], parts[2])
			r := e.raw(t, "GET", forged, "", "")
			if r.StatusCode != http.StatusNotFound {
				t.Errorf("%d %s, want 404", r.StatusCode, r.body)
			}
		})
		t.Run("an expired link says so", func(t *testing.T) {
			e.clock.Advance(platform.FileLinkLifetime)
			r := e.raw(t, "GET", link, "", "")
			var body apiclient.ErrorBody
			_ = json.Unmarshal([]byte(r.body), &body)
			if r.StatusCode != http.StatusGone || body.Error.Code != "link_expired" || !strings.Contains(body.Error.Message, "expired") {
				t.Errorf("%d %s, want 410 link_expired", r.StatusCode, r.body)
			}
		})
	})
}
