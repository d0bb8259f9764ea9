package api_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// indexQueued plays the ingestion worker: it claims every queued source
// and indexes each one's stored content as one chunk per paragraph.
func indexQueued(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	claimed, err := st.KnowledgeJobs().Claim(ctx, "test-worker", time.Minute, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range claimed {
		src := &claimed[i]
		content, err := st.Tenant(src.TenantID).Knowledge().Content(ctx, src.ID)
		if err != nil {
			t.Fatal(err)
		}
		var chunks []store.KnowledgeChunk
		for j, para := range strings.Split(string(content), "\n\n") {
			chunks = append(chunks, store.KnowledgeChunk{Ordinal: j, Text: para, Tokens: len(para) / 4})
		}
		if err := st.KnowledgeJobs().Done(ctx, src, store.KnowledgeIndexed{ContentHash: src.ContentHash, Chunks: chunks}); err != nil {
			t.Fatalf("index %s: %v", src.ID, err)
		}
	}
}

func TestKnowledgeBasesThroughTheAPI(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		key := e.mustCreateTenant(t, "acme")
		cl := e.client(key)
		ctx := context.Background()
		kb, err := cl.CreateKnowledgeBase(ctx, "acme", apiclient.CreateKnowledgeBaseRequest{Name: "Help Center"})
		if err != nil {
			t.Fatal(err)
		}
		if kb.Slug != "help-center" || kb.Embedding != nil || kb.Generation != 1 {
			t.Fatalf("created %+v", kb)
		}
		text, created, err := cl.AddSource(ctx, "acme", kb.Slug, apiclient.AddSourceRequest{
			Title: "Refunds", Text: "Refunds take five business days.\n\nShipping is free above 50 euros.", Tags: []string{"billing"}})
		if err != nil || !created {
			t.Fatalf("add text: created %v, %v", created, err)
		}
		if text.Kind != "text" || text.Status != "queued" || text.Title != "Refunds" || !slices.Equal(text.Tags, []string{"billing"}) ||
			!strings.HasPrefix(text.ContentHash, "sha256:") || text.Bytes == 0 {
			t.Fatalf("text source %+v", text)
		}
		qa, created, err := cl.AddSource(ctx, "acme", kb.Slug, apiclient.AddSourceRequest{
			QA: []apiclient.QAPair{{Question: "Do you ship abroad?", Answer: "Yes, to every country of the EU."}}})
		if err != nil || !created || qa.Kind != "qa" {
			t.Fatalf("add qa: %+v, created %v, %v", qa, created, err)
		}

		t.Run("the same content again answers 200 with the existing source", func(t *testing.T) {
			again, created, err := cl.AddSource(ctx, "acme", kb.Slug, apiclient.AddSourceRequest{
				Text: "Refunds take five business days.\n\nShipping is free above 50 euros."})
			if err != nil || created || again.ID != text.ID {
				t.Fatalf("again: %+v, created %v, %v", again, created, err)
			}
		})
		t.Run("a file upload larger than the server's JSON limit is a source", func(t *testing.T) {
			doc := strings.Repeat("Warranty claims need the receipt. ", 3000) // ~100 KB, past MaxBodyBytes
			file, created, err := cl.AddFileSource(ctx, "acme", kb.Slug, "warranty.txt", strings.NewReader(doc), []string{"legal"}, "")
			if err != nil || !created || file.Kind != "file" || file.Filename != "warranty.txt" || file.Title != "warranty.txt" || file.Bytes != int64(len(doc)) {
				t.Fatalf("upload: %+v, created %v, %v", file, created, err)
			}
			got, err := st.Tenant(e.tenantID(t, "acme")).Knowledge().Content(ctx, file.ID)
			if err != nil || string(got) != doc {
				t.Fatalf("stored %d bytes, %v; want the upload", len(got), err)
			}
		})
		t.Run("sources are listed and read; a url is stored queued", func(t *testing.T) {
			page, created, err := cl.AddSource(ctx, "acme", kb.Slug, apiclient.AddSourceRequest{URL: "https://help.acme.example/faq", Refresh: "24h"})
			if err != nil || !created || page.Kind != "url" || page.Status != "queued" || page.Refresh != "24h0m0s" {
				t.Fatalf("url: %+v, %v", page, err)
			}
			list, err := cl.ListSources(ctx, "acme", kb.Slug)
			if err != nil || len(list.Sources) != 4 {
				t.Fatalf("list: %+v, %v", list, err)
			}
			got, err := cl.GetSource(ctx, "acme", kb.ID, qa.ID)
			if err != nil || got.ID != qa.ID {
				t.Fatalf("get: %+v, %v", got, err)
			}
		})
		t.Run("a base and a source go over the wire with exactly their fields", func(t *testing.T) {
			var base apiclient.KnowledgeBase
			wantKeys(t, e.strictGet(t, "/v1/tenants/acme/knowledge-bases/"+kb.Slug, key, &base),
				[]string{"id", "slug", "name", "generation", "created_at", "updated_at"})
			var src apiclient.KnowledgeSource
			wantKeys(t, e.strictGet(t, "/v1/tenants/acme/knowledge-bases/"+kb.Slug+"/sources/"+text.ID, key, &src),
				[]string{"id", "kind", "title", "url", "filename", "tags", "status", "error", "chunks", "pages", "indexed_at",
					"content_hash", "bytes", "created_at"})
		})
		t.Run("keyword search finds a chunk once it is indexed", func(t *testing.T) {
			indexQueued(t, st)
			got, err := cl.GetSource(ctx, "acme", kb.Slug, text.ID)
			if err != nil || got.Status != "ready" || got.Chunks != 2 || got.IndexedAt == nil {
				t.Fatalf("indexed source %+v, %v", got, err)
			}
			chunks, err := cl.SourceChunks(ctx, "acme", kb.Slug, text.ID)
			if err != nil || len(chunks.Chunks) != 2 || chunks.Chunks[1].Text != "Shipping is free above 50 euros." {
				t.Fatalf("chunks %+v, %v", chunks, err)
			}
			res, err := cl.SearchKnowledge(ctx, "acme", kb.Slug, apiclient.SearchKnowledgeRequest{Query: "how long do refunds take"})
			if err != nil || len(res.Results) == 0 {
				t.Fatalf("search: %+v, %v", res, err)
			}
			top := res.Results[0]
			if top.Source != text.ID || top.Text != "Refunds take five business days." || top.KeywordRank != 1 || top.VectorRank != 0 || top.Score <= 0 {
				t.Fatalf("top result %+v", top)
			}
			tagged, err := cl.SearchKnowledge(ctx, "acme", kb.Slug, apiclient.SearchKnowledgeRequest{Query: "refunds", Tags: []string{"legal"}})
			if err != nil || len(tagged.Results) != 0 {
				t.Fatalf("a search of another tag found %+v, %v", tagged, err)
			}
			list, err := cl.ListSources(ctx, "acme", kb.Slug)
			if err != nil {
				t.Fatal(err)
			}
			chunkCount := 0
			for _, src := range list.Sources {
				chunkCount += src.Chunks
			}
			metrics := e.raw(t, "GET", "/metrics", "", "").body
			for _, want := range []string{fmt.Sprintf(`parley_knowledge_sources{status="ready"} %d`, len(list.Sources)),
				`parley_knowledge_sources{status="queued"} 0`, fmt.Sprintf("parley_knowledge_chunks %d", chunkCount),
				"parley_knowledge_search_duration_seconds_count 2"} {
				if !strings.Contains(metrics, want+"\n") {
					t.Errorf("/metrics lacks %q", want)
				}
			}
		})
		t.Run("a refresh queues the source again", func(t *testing.T) {
			got, err := cl.RefreshSource(ctx, "acme", kb.Slug, qa.ID)
			if err != nil || got.Status != "queued" {
				t.Fatalf("refresh: %+v, %v", got, err)
			}
		})
		t.Run("a reindex starts a new generation", func(t *testing.T) {
			got, err := cl.ReindexKnowledgeBase(ctx, "acme", kb.Slug)
			if err != nil || got.Building != 2 || got.Generation != 1 {
				t.Fatalf("reindex: %+v, %v", got, err)
			}
			indexQueued(t, st)
			got, err = cl.GetKnowledgeBase(ctx, "acme", kb.Slug)
			if err != nil || got.Generation != 2 || got.Building != 0 {
				t.Fatalf("after indexing: %+v, %v", got, err)
			}
		})
		t.Run("a source is deleted, then a base; both are audited", func(t *testing.T) {
			if err := cl.DeleteSource(ctx, "acme", kb.Slug, qa.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := cl.GetSource(ctx, "acme", kb.Slug, qa.ID); apiCode(err) != http.StatusNotFound {
				t.Fatalf("deleted source: %v", err)
			}
			renamed := "Support"
			if got, err := cl.UpdateKnowledgeBase(ctx, "acme", kb.Slug, apiclient.UpdateKnowledgeBaseRequest{Name: &renamed}); err != nil || got.Name != "Support" {
				t.Fatalf("rename: %+v, %v", got, err)
			}
			if err := cl.DeleteKnowledgeBase(ctx, "acme", kb.Slug); err != nil {
				t.Fatal(err)
			}
			if list, err := cl.ListKnowledgeBases(ctx, "acme"); err != nil || len(list.KnowledgeBases) != 0 {
				t.Fatalf("list after delete: %+v, %v", list, err)
			}
			log, err := cl.AuditLog(ctx, "acme", apiclient.AuditQuery{})
			if err != nil {
				t.Fatal(err)
			}
			var actions []string
			for _, e := range log.Entries {
				actions = append(actions, e.Action)
			}
			for _, want := range []string{"knowledge_base.created", "knowledge_source.added", "knowledge_source.refreshed",
				"knowledge_base.reindexed", "knowledge_base.renamed", "knowledge_source.deleted", "knowledge_base.deleted"} {
				if !slices.Contains(actions, want) {
					t.Errorf("audit log %v lacks %s", actions, want)
				}
			}
			if n := countOf(actions, "knowledge_source.added"); n != 4 {
				t.Errorf("%d knowledge_source.added entries, want 4 (not the duplicate)", n)
			}
		})
	})
}

func countOf(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}

func (e *env) tenantID(t *testing.T, slug string) string {
	t.Helper()
	tn, err := e.svc.Tenants().Get(context.Background(), platform.Operator(), slug)
	if err != nil {
		t.Fatal(err)
	}
	return tn.ID
}

func TestKnowledgeRoutesSayWhatIsWrong(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		key := e.mustCreateTenant(t, "acme")
		other := e.mustCreateTenant(t, "other")
		ctx := context.Background()
		kb, err := e.client(key).CreateKnowledgeBase(ctx, "acme", apiclient.CreateKnowledgeBaseRequest{Name: "Help", Slug: "help"})
		if err != nil {
			t.Fatal(err)
		}
		base := "/v1/tenants/acme/knowledge-bases"
		cases := []struct {
			name, method, path, body string
			status                   int
			pointers                 []string
		}{
			{"a base without a name", "POST", base, `{"slug": "Bad Slug"}`, 422, []string{"/name", "/slug"}},
			{"a base with half an embedding model", "POST", base, `{"name": "x", "embedding": {"provider": "openai"}}`, 422, []string{"/embedding/model"}},
			{"a slug taken", "POST", base, `{"name": "Help"}`, 409, nil},
			{"a source of two kinds", "POST", base + "/help/sources", `{"text": "a", "url": "https://x.example"}`, 400, []string{"/text"}},
			{"a source of no kind", "POST", base + "/help/sources", `{"tags": ["a"]}`, 422, []string{""}},
			{"a url that is not http", "POST", base + "/help/sources", `{"url": "ftp://files.example/a"}`, 422, []string{"/url"}},
			{"a url with credentials", "POST", base + "/help/sources", `{"sitemap": "https://u:p@x.example/sitemap.xml"}`, 422, []string{"/sitemap"}},
			{"a refresh of a text", "POST", base + "/help/sources", `{"text": "a", "refresh": "24h"}`, 422, []string{"/refresh"}},
			{"a refresh too often", "POST", base + "/help/sources", `{"url": "https://x.example", "refresh": "1m"}`, 422, []string{"/refresh"}},
			{"questions without answers", "POST", base + "/help/sources", `{"qa": [{"question": "q", "answer": ""}]}`, 422, []string{"/qa/0/answer"}},
			{"an empty tag", "POST", base + "/help/sources", `{"text": "a", "tags": ["ok", ""]}`, 422, []string{"/tags/1"}},
			{"a field of the wrong type", "POST", base + "/help/sources", `{"text": 5}`, 400, []string{"/text"}},
			{"an unknown field", "POST", base + "/help/sources", `{"txt": "a"}`, 400, nil},
			{"a search without a query", "POST", base + "/help/search", `{"top_k": 500}`, 422, []string{"/query", "/top_k"}},
			{"a base that does not exist", "GET", base + "/nope", "", 404, nil},
		}
		for _, tc := range cases {
			t.Run(tc.name+" is refused", func(t *testing.T) {
				r := e.raw(t, tc.method, tc.path, key, tc.body)
				if r.StatusCode != tc.status {
					t.Fatalf("%d %s, want %d", r.StatusCode, r.body, tc.status)
				}
				for _, p := range tc.pointers {
					if !strings.Contains(r.body, fmt.Sprintf(`"pointer":%q`, p)) {
						t.Errorf("no pointer %q in %s", p, r.body)
					}
				}
			})
		}
		t.Run("another tenant's key gets 404", func(t *testing.T) {
			r := e.raw(t, "GET", base+"/help", other, "")
			if r.StatusCode != http.StatusNotFound {
				t.Fatalf("%d %s", r.StatusCode, r.body)
			}
			if r := e.raw(t, "GET", "/v1/tenants/other/knowledge-bases/"+kb.ID, other, ""); r.StatusCode != http.StatusNotFound {
				t.Fatalf("acme's base under other's path: %d %s", r.StatusCode, r.body)
			}
		})
		t.Run("an upload past the maximum streams to 413", func(t *testing.T) {
			body := io.LimitReader(zeros{}, api.MaxSourceUpload+1<<20)
			pr, pw := io.Pipe()
			go func() {
				fmt.Fprint(pw, "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n\r\n")
				_, err := io.Copy(pw, body)
				pw.CloseWithError(err)
			}()
			req, _ := http.NewRequest("POST", e.srv.URL+base+"/help/sources", pr)
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "multipart/form-data; boundary=b")
			resp, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "too_large") {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
		})
		t.Run("a declared 200 MB upload is refused before its body is read", func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(e.srv.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST %s/help/sources HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
				"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: %d\r\n\r\n", base, key, 200<<20)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d", resp.StatusCode)
			}
		})
		t.Run("the tenant's source limit is a conflict that says so", func(t *testing.T) {
			one := int64(1)
			tn := e.tenantID(t, "acme")
			if err := st.Tenant(tn).Knowledge().PutLimits(ctx, store.KnowledgeLimits{MaxSources: &one}); err != nil {
				t.Fatal(err)
			}
			if r := e.raw(t, "POST", base+"/help/sources", key, `{"text": "first"}`); r.StatusCode != http.StatusCreated {
				t.Fatalf("first: %d %s", r.StatusCode, r.body)
			}
			r := e.raw(t, "POST", base+"/help/sources", key, `{"text": "second"}`)
			if r.StatusCode != http.StatusConflict || !strings.Contains(r.body, "at most 1 sources") || !strings.Contains(r.body, `"pointer":"/text"`) {
				t.Fatalf("second: %d %s", r.StatusCode, r.body)
			}
		})
	})
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestASitemapShowsItsProgressWhileItsPagesIndex: the sitemap's JSON
// counts its pages and the chunks of those indexed so far, and each page
// names its sitemap.
func TestASitemapShowsItsProgressWhileItsPagesIndex(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		key := e.mustCreateTenant(t, "acme")
		cl := e.client(key)
		ctx := context.Background()
		if _, err := cl.CreateKnowledgeBase(ctx, "acme", apiclient.CreateKnowledgeBaseRequest{Name: "Help"}); err != nil {
			t.Fatal(err)
		}
		sm, _, err := cl.AddSource(ctx, "acme", "help", apiclient.AddSourceRequest{Sitemap: "https://help.acme.example/sitemap.xml"})
		if err != nil || sm.Kind != "sitemap" {
			t.Fatalf("add sitemap: %+v, %v", sm, err)
		}
		// Play the worker: read the sitemap, then index one of its pages.
		jobs := st.KnowledgeJobs()
		claimed, err := jobs.Claim(ctx, "test-worker", time.Minute, 10, nil)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claimed %d, %v", len(claimed), err)
		}
		pages := []store.SitemapPage{{URL: "https://help.acme.example/a"}, {URL: "https://help.acme.example/b"}}
		if err := jobs.DoneSitemap(ctx, &claimed[0], pages, "the sitemap lists 9 pages; only the first 2 are indexed"); err != nil {
			t.Fatal(err)
		}
		claimed, err = jobs.Claim(ctx, "test-worker", time.Minute, 1, nil)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claimed %d pages, %v", len(claimed), err)
		}
		chunks := []store.KnowledgeChunk{{Ordinal: 0, Text: "one"}, {Ordinal: 1, Text: "two"}, {Ordinal: 2, Text: "three"}}
		if err := jobs.Done(ctx, &claimed[0], store.KnowledgeIndexed{ContentHash: "sha256:a", Chunks: chunks}); err != nil {
			t.Fatal(err)
		}
		r := e.raw(t, "GET", "/v1/tenants/acme/knowledge-bases/help/sources/"+sm.ID, key, "")
		for _, want := range []string{`"pages":2`, `"chunks":3`, `"warning":"the sitemap lists 9 pages; only the first 2 are indexed"`} {
			if !strings.Contains(r.body, want) {
				t.Errorf("the sitemap's JSON lacks %s: %s", want, r.body)
			}
		}
		list, err := cl.ListSources(ctx, "acme", "help")
		if err != nil || len(list.Sources) != 3 {
			t.Fatalf("list: %+v, %v", list, err)
		}
		statuses := map[string]string{}
		for _, s := range list.Sources[1:] {
			if s.Parent != sm.ID || s.Kind != "url" {
				t.Errorf("page %+v does not name its sitemap", s)
			}
			statuses[s.URL] = s.Status
		}
		if len(statuses) != 2 || !slices.Contains([]string{"ready", "queued"}, statuses["https://help.acme.example/a"]) {
			t.Errorf("pages %v", statuses)
		}
		metrics := e.raw(t, "GET", "/metrics", "", "").body
		if !strings.Contains(metrics, "parley_knowledge_chunks 3\n") {
			t.Errorf("the sitemap's chunks are counted twice in /metrics")
		}
	})
}
