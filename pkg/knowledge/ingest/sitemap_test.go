package ingest_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/knowledge/extract"
	"github.com/parleyhq/parley/pkg/knowledge/ingest"
	"github.com/parleyhq/parley/pkg/knowledge/retrieve"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// site is a test web site: its handler serves the files in pages
// (a gzipped body when the name ends in .gz) and counts requests by
// path.
type site struct {
	*httptest.Server
	mu    sync.Mutex
	pages map[string]string
	hits  map[string]int
	// agents are the User-Agent headers seen.
	agents map[string]bool
}

func newSite(t *testing.T, pages map[string]string) *site {
	s := &site{pages: pages, hits: map[string]int{}, agents: map[string]bool{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.agents[r.Header.Get("User-Agent")] = true
		body, ok := s.pages[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		if strings.HasSuffix(r.URL.Path, ".gz") {
			w.Header().Set("Content-Type", "application/gzip")
		} else if strings.HasSuffix(r.URL.Path, ".xml") || r.URL.Path == "/robots.txt" {
			w.Header().Set("Content-Type", "text/plain")
		} else {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		}
		io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) set(path, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[path] = body
}

func (s *site) hit(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// policy allows the site's own address and port, nothing else private.
func (s *site) policy() outbound.Policy {
	addr := netip.MustParseAddrPort(strings.TrimPrefix(s.URL, "http://"))
	return outbound.Policy{AllowCIDRs: []netip.Prefix{netip.PrefixFrom(addr.Addr(), 32)}, ExtraPorts: []int{int(addr.Port())}}
}

func gzipped(t *testing.T, text string) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	io.WriteString(zw, text)
	zw.Close()
	return b.String()
}

func urlset(urls ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, u := range urls {
		fmt.Fprintf(&b, "<url><loc>%s</loc><lastmod>2026-11-01</lastmod></url>\n", u)
	}
	b.WriteString("</urlset>")
	return b.String()
}

// pagesOf lists the sources a sitemap made, by URL.
func pagesOf(t *testing.T, st *store.Store, sitemap *store.KnowledgeSource) map[string]store.KnowledgeSource {
	t.Helper()
	all, err := st.Tenant(tenant).Knowledge().Sources(context.Background(), sitemap.BaseID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]store.KnowledgeSource{}
	for _, s := range all {
		if s.ParentID == sitemap.ID {
			out[s.URL] = s
		}
	}
	return out
}

func TestSitemaps(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := &store.Tenant{Slug: "acme", Name: "Acme"}
		if err := st.Tenants().Create(ctx, tn); err != nil {
			t.Fatal(err)
		}
		tenant = tn.ID
		t.Run("a sitemap index is followed, and each page becomes a source of the sitemap, indexed or skipped with its reason", func(t *testing.T) {
			s := newSite(t, map[string]string{
				"/robots.txt": "User-agent: *\nDisallow: /private/\n",
				"/a":          `<title>Returns</title><h1>Returns</h1><p>Returns are free for thirty days.</p><script>var zebraquux = 1;</script>`,
				"/b":          `<title>Shipping</title><h1>Shipping</h1><p>Parcels leave the next working day.</p>`,
				"/private/x":  `<p>Internal notes.</p>`,
			})
			s.set("/sitemap.xml", `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+
				`<sitemap><loc>`+s.URL+`/one.xml</loc></sitemap><sitemap><loc>`+s.URL+`/two.xml.gz</loc></sitemap></sitemapindex>`)
			s.set("/one.xml", urlset(s.URL+"/a", s.URL+"/private/x", "http://10.1.2.3/intranet"))
			s.set("/two.xml.gz", gzipped(t, urlset(s.URL+"/b", s.URL+"/a", "ftp://files.example/c")))
			w, _, b := setup(t, st, "site", "", ingest.Options{Outbound: s.policy()})
			src := addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceSitemap, URL: s.URL + "/sitemap.xml", Tags: []string{"web"}})
			drain(t, w)
			got := source(t, st, src)
			pages := pagesOf(t, st, src)
			if got.Status != store.SourceReady || got.Pages != 5 || len(pages) != 5 || got.Warning != "" {
				t.Fatalf("sitemap: status %s, %d pages (%d sources), warning %q, error %q", got.Status, got.Pages, len(pages), got.Warning, got.Error)
			}
			want := map[string]string{
				s.URL + "/a":               "ready",
				s.URL + "/b":               "ready",
				s.URL + "/private/x":       "failed: " + s.URL + "/robots.txt disallows /private/x for ParleyBot/1.0",
				"http://10.1.2.3/intranet": "failed: not fetched: destination 10.1.2.3",
				"ftp://files.example/c":    "failed: not an absolute http or https URL",
			}
			chunks := 0
			for u, status := range want {
				p := pages[u]
				line := p.Status
				if p.Error != "" {
					line += ": " + p.Error
				}
				if !strings.HasPrefix(line, status) {
					t.Errorf("page %s: %q, want %q", u, line, status)
				}
				if p.Kind != store.SourceURL || len(p.Tags) != 1 || p.Tags[0] != "web" {
					t.Errorf("page %s: kind %s, tags %v", u, p.Kind, p.Tags)
				}
				chunks += p.Chunks
			}
			if chunks == 0 || got.Chunks != chunks {
				t.Errorf("the sitemap has %d chunks, its pages %d", got.Chunks, chunks)
			}
			if s.hit("/robots.txt") != 1 || s.hit("/private/x") != 0 {
				t.Errorf("robots.txt read %d times, the disallowed page %d", s.hit("/robots.txt"), s.hit("/private/x"))
			}
			if !s.agents[ingest.UserAgent] || len(s.agents) != 1 {
				t.Errorf("user agents %v", s.agents)
			}
			search := retrieve.New(ctx, st, slog.New(slog.DiscardHandler))
			res, err := search.Search(ctx, tenant, b.ID, retrieve.Query{Text: "thirty days", TopK: 3, Tags: []string{"web"}})
			if err != nil || len(res) != 1 || res[0].URL != s.URL+"/a" {
				t.Fatalf("search: %+v, %v; want the page /a, by its own URL", res, err)
			}
			if res, _ := search.Search(ctx, tenant, b.ID, retrieve.Query{Text: "zebraquux", TopK: 3}); len(res) != 0 {
				t.Errorf("a script's text was indexed: %+v", res)
			}
			t.Run("a refresh adds pages newly listed and deletes pages no longer listed", func(t *testing.T) {
				s.set("/c", `<h1>Warranty</h1><p>Two years on everything.</p>`)
				s.set("/one.xml", urlset(s.URL+"/a", s.URL+"/c"))
				s.set("/two.xml.gz", gzipped(t, urlset()))
				if err := st.Tenant(tenant).Knowledge().RefreshSource(ctx, b.ID, src.ID); err != nil {
					t.Fatal(err)
				}
				drain(t, w)
				pages := pagesOf(t, st, src)
				if len(pages) != 2 || pages[s.URL+"/a"].Status != store.SourceReady || pages[s.URL+"/c"].Status != store.SourceReady {
					t.Fatalf("pages after the refresh: %+v", pages)
				}
				if got := source(t, st, src); got.Pages != 2 || got.Chunks != pages[s.URL+"/a"].Chunks+pages[s.URL+"/c"].Chunks {
					t.Errorf("sitemap: %d pages, %d chunks", got.Pages, got.Chunks)
				}
			})
			t.Run("deleting the sitemap deletes its pages and their chunks", func(t *testing.T) {
				if err := st.Tenant(tenant).Knowledge().DeleteSource(ctx, b.ID, src.ID); err != nil {
					t.Fatal(err)
				}
				all, _ := st.Tenant(tenant).Knowledge().Sources(ctx, b.ID)
				if len(all) != 0 {
					t.Fatalf("%d sources left", len(all))
				}
				var n int64
				st.DB().Table("knowledge_chunks").Where("base_id = ?", b.ID).Count(&n)
				if n != 0 {
					t.Fatalf("%d chunks left", n)
				}
			})
		})
		t.Run("a sitemap of 100,000 pages is cut at the tenant's limit of pages per sitemap, saying so", func(t *testing.T) {
			s := newSite(t, map[string]string{})
			var b strings.Builder
			b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
			for i := range 100_000 {
				fmt.Fprintf(&b, "<url><loc>%s/p/%d</loc></url>", s.URL, i)
			}
			b.WriteString("</urlset>")
			s.set("/sitemap.xml", b.String())
			for i := range 3 {
				s.set(fmt.Sprintf("/p/%d", i), fmt.Sprintf("<p>Page number %d.</p>", i))
			}
			three := int64(3)
			if err := st.Tenant(tenant).Knowledge().PutLimits(ctx, store.KnowledgeLimits{MaxSitemapPages: &three}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Tenant(tenant).Knowledge().PutLimits(ctx, store.KnowledgeLimits{}) })
			w, _, kb := setup(t, st, "big", "", ingest.Options{Outbound: s.policy()})
			src := addSource(t, st, kb.ID, store.KnowledgeSource{Kind: store.SourceSitemap, URL: s.URL + "/sitemap.xml"})
			drain(t, w)
			got := source(t, st, src)
			if got.Status != store.SourceReady || got.Pages != 3 || len(pagesOf(t, st, src)) != 3 ||
				got.Warning != "the sitemap lists 100000 pages; only the first 3 are indexed (the tenant's limit of 3 pages per sitemap)" {
				t.Fatalf("status %s, %d pages, warning %q, error %q", got.Status, got.Pages, got.Warning, got.Error)
			}
			for u, p := range pagesOf(t, st, src) {
				if p.Status != store.SourceReady {
					t.Errorf("page %s: %s %q", u, p.Status, p.Error)
				}
			}
		})
		t.Run("a gzipped sitemap that unpacks past the limit fails without being unpacked whole", func(t *testing.T) {
			s := newSite(t, map[string]string{})
			s.set("/sitemap.xml.gz", gzipped(t, `<?xml version="1.0"?><urlset>`+strings.Repeat(" ", 8<<20)+`</urlset>`))
			w, _, kb := setup(t, st, "bomb-sitemap", "", ingest.Options{Outbound: s.policy(), Limits: extract.Limits{MaxBytes: 1 << 20}})
			src := addSource(t, st, kb.ID, store.KnowledgeSource{Kind: store.SourceSitemap, URL: s.URL + "/sitemap.xml.gz"})
			drain(t, w)
			got := source(t, st, src)
			if got.Status != store.SourceFailed || !strings.Contains(got.Error, "unpacks to more than 1048576 bytes") {
				t.Fatalf("status %s, error %q", got.Status, got.Error)
			}
		})
		t.Run("a page robots.txt disallows for ParleyBot fails saying so, and is never fetched", func(t *testing.T) {
			s := newSite(t, map[string]string{
				"/robots.txt":    "User-agent: *\nDisallow:\n\nUser-agent: ParleyBot\nDisallow: /\nAllow: /docs/\nDisallow: /docs/*.pdf$\n",
				"/docs/guide":    "<p>The guide.</p>",
				"/docs/a.pdf":    "%PDF-1.4",
				"/blog/post":     "<p>A post.</p>",
				"/docs/b.pdf?x=": "x",
			})
			w, _, kb := setup(t, st, "robots", "", ingest.Options{Outbound: s.policy()})
			cases := map[string]string{"/docs/guide": store.SourceReady, "/docs/a.pdf": store.SourceFailed, "/blog/post": store.SourceFailed}
			srcs := map[string]*store.KnowledgeSource{}
			for path := range cases {
				srcs[path] = addSource(t, st, kb.ID, store.KnowledgeSource{Kind: store.SourceURL, URL: s.URL + path})
			}
			drain(t, w)
			for path, status := range cases {
				got := source(t, st, srcs[path])
				if got.Status != status {
					t.Errorf("%s: status %s, error %q; want %s", path, got.Status, got.Error, status)
				}
				if status == store.SourceFailed && (!strings.Contains(got.Error, "robots.txt disallows "+path) || s.hit(path) != 0) {
					t.Errorf("%s: error %q, fetched %d times", path, got.Error, s.hit(path))
				}
			}
			if n := s.hit("/robots.txt"); n != 1 {
				t.Errorf("robots.txt read %d times for one host", n)
			}
		})
	})
}

func TestRefreshSchedules(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := &store.Tenant{Slug: "acme", Name: "Acme"}
		if err := st.Tenants().Create(ctx, tn); err != nil {
			t.Fatal(err)
		}
		tenant = tn.ID
		var mu sync.Mutex
		var asked []string
		etag, body := `"v1"`, "<h1>Prices</h1><p>Tea costs two euros.</p>"
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(w, r)
			case "/prices":
				asked = append(asked, r.Header.Get("If-None-Match")+" "+r.Header.Get("If-Modified-Since"))
				if r.Header.Get("If-None-Match") == etag {
					w.WriteHeader(http.StatusNotModified)
					return
				}
				w.Header().Set("ETag", etag)
				w.Header().Set("Last-Modified", "Sat, 01 Nov 2026 10:00:00 GMT")
				w.Header().Set("Content-Type", "text/html")
				io.WriteString(w, body)
			}
		}))
		defer srv.Close()
		addr := netip.MustParseAddrPort(strings.TrimPrefix(srv.URL, "http://"))
		policy := outbound.Policy{AllowCIDRs: []netip.Prefix{netip.PrefixFrom(addr.Addr(), 32)}, ExtraPorts: []int{int(addr.Port())}}
		clock := newClock()
		w, _, b := setup(t, st, "refresh", "", ingest.Options{Outbound: policy, Now: clock.Now})
		page := addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceURL, URL: srv.URL + "/prices", RefreshSeconds: 24 * 3600})
		other := addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceText, ContentType: "text/plain", Content: []byte("Opening hours are nine to five.")})
		drain(t, w)
		chunkIDs := func(src *store.KnowledgeSource) []int64 {
			cs, err := st.Tenant(tenant).Knowledge().Chunks(ctx, b.ID, src.ID)
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, c := range cs {
				ids = append(ids, c.ID)
			}
			return ids
		}
		first, otherChunks := chunkIDs(page), chunkIDs(other)
		indexed := source(t, st, page)
		if indexed.Status != store.SourceReady || len(first) != 1 || indexed.NextAttemptAt == nil || !indexed.NextAttemptAt.Equal(clock.Now().Add(24*time.Hour)) {
			t.Fatalf("status %s, chunks %v, next %v", indexed.Status, first, indexed.NextAttemptAt)
		}
		t.Run("nothing is due before the interval has passed", func(t *testing.T) {
			clock.Advance(23 * time.Hour)
			if n, err := w.RunOnce(ctx); n != 0 || err != nil {
				t.Fatalf("claimed %d, %v", n, err)
			}
		})
		t.Run("when due, the page is asked whether it changed; a 304 keeps its chunks and bumps indexed_at", func(t *testing.T) {
			clock.Advance(time.Hour)
			drain(t, w)
			got := source(t, st, page)
			if got.Status != store.SourceReady || !got.IndexedAt.Equal(clock.Now()) || !got.NextAttemptAt.Equal(clock.Now().Add(24*time.Hour)) {
				t.Fatalf("status %s, indexed at %v, next %v (now %v)", got.Status, got.IndexedAt, got.NextAttemptAt, clock.Now())
			}
			if ids := chunkIDs(page); fmt.Sprint(ids) != fmt.Sprint(first) {
				t.Errorf("chunks %v, were %v", ids, first)
			}
			mu.Lock()
			defer mu.Unlock()
			if want := `"v1" Sat, 01 Nov 2026 10:00:00 GMT`; len(asked) != 2 || asked[1] != want {
				t.Errorf("requests asked %q, want the second to send %q", asked, want)
			}
		})
		t.Run("a changed page is indexed again, and only that source", func(t *testing.T) {
			mu.Lock()
			etag, body = `"v2"`, "<h1>Prices</h1><p>Tea costs three euros.</p>"
			mu.Unlock()
			clock.Advance(24 * time.Hour)
			drain(t, w)
			cs, _ := st.Tenant(tenant).Knowledge().Chunks(ctx, b.ID, page.ID)
			if len(cs) != 1 || !strings.Contains(cs[0].Text, "three euros") {
				t.Fatalf("chunks %+v", cs)
			}
			if ids := chunkIDs(other); fmt.Sprint(ids) != fmt.Sprint(otherChunks) {
				t.Errorf("the other source's chunks %v, were %v", ids, otherChunks)
			}
		})
	})
}

func TestTenantLimitsFailASourceWhenItIsIndexed(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := &store.Tenant{Slug: "acme", Name: "Acme"}
		if err := st.Tenants().Create(ctx, tn); err != nil {
			t.Fatal(err)
		}
		tenant = tn.ID
		s := newSite(t, map[string]string{"/big": "<p>" + strings.Repeat("A long page of words. ", 50) + "</p>"})
		w, _, b := setup(t, st, "limits", "", ingest.Options{Outbound: s.policy()})
		t.Run("a fetched page past the tenant's bytes", func(t *testing.T) {
			max := int64(100)
			if err := st.Tenant(tenant).Knowledge().PutLimits(ctx, store.KnowledgeLimits{MaxBytes: &max}); err != nil {
				t.Fatal(err)
			}
			src := addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceURL, URL: s.URL + "/big"})
			drain(t, w)
			got := source(t, st, src)
			if got.Status != store.SourceFailed || !strings.Contains(got.Error, "hold at most 100 bytes") {
				t.Fatalf("status %s, error %q", got.Status, got.Error)
			}
		})
		t.Run("a document past the tenant's chunks", func(t *testing.T) {
			one := int64(1)
			if err := st.Tenant(tenant).Knowledge().PutLimits(ctx, store.KnowledgeLimits{MaxChunks: &one}); err != nil {
				t.Fatal(err)
			}
			src := addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceFile, Filename: "two.md", Content: []byte("# One\n\nFirst part.\n\n# Two\n\nSecond part.")})
			drain(t, w)
			got := source(t, st, src)
			if got.Status != store.SourceFailed || !strings.Contains(got.Error, "hold at most 1 chunks") || got.Attempts != 1 {
				t.Fatalf("status %s, error %q, attempts %d", got.Status, got.Error, got.Attempts)
			}
		})
	})
}
