package ingest_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/knowledge/extract"
	"github.com/parleyhq/parley/pkg/knowledge/ingest"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/llm/openai"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// tenant is the id of the tenant the current backend's sources are in.
var tenant string

const guide = `# Guide

Welcome to the guide.

## Install

### Linux

Run apt install parley.

### macOS

Run brew install parley.
`

// setup returns a worker over st whose "fake" provider embeds on a
// fresh fake server, and a base embedding with it (keyword-only when
// provider is "").
func setup(t testing.TB, st *store.Store, slug, provider string, opts ingest.Options) (*ingest.Worker, *llmtest.Server, *store.KnowledgeBase) {
	t.Helper()
	s := llmtest.NewServer(t, llmtest.Options{})
	p, err := openai.New(openai.Config{Name: "fake", BaseURL: s.URL(), APIKey: "k", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	b := &store.KnowledgeBase{Slug: slug, Name: "Docs", EmbeddingProvider: provider}
	if provider != "" {
		b.EmbeddingModel = "embed-small"
	}
	if err := st.Tenant(tenant).Knowledge().CreateBase(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	embedders := func(name string) (llm.Embedder, bool) { return p, name == "fake" }
	return ingest.New(st, embedders, opts), s, b
}

func addSource(t testing.TB, st *store.Store, baseID string, src store.KnowledgeSource) *store.KnowledgeSource {
	t.Helper()
	src.ContentHash = fmt.Sprintf("sha256:%x", sha256.Sum256(append(src.Content, src.URL...)))
	src.Bytes = int64(len(src.Content))
	if _, err := st.Tenant(tenant).Knowledge().AddSource(context.Background(), baseID, &src); err != nil {
		t.Fatal(err)
	}
	return &src
}

// drain indexes every source due now.
func drain(t *testing.T, w *ingest.Worker) {
	t.Helper()
	for {
		n, err := w.RunOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

func source(t testing.TB, st *store.Store, src *store.KnowledgeSource) *store.KnowledgeSource {
	t.Helper()
	got, err := st.Tenant(tenant).Knowledge().Source(context.Background(), src.BaseID, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// clock is a test's clock: it moves when the test advances it.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

// newClock starts a minute ahead of the database's clock, so a source
// the test adds (due at the database's now) is due at once on it.
func newClock() *clock { return &clock{t: time.Now().UTC().Add(time.Minute).Truncate(time.Second)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// lyingZip is a DOCX whose document.xml unpacks to size bytes while the
// archive says 100: a zip bomb that a check of the declared sizes alone
// would let through.
func lyingZip(t *testing.T, size int) []byte {
	t.Helper()
	var packed bytes.Buffer
	fw, _ := flate.NewWriter(&packed, flate.BestCompression)
	fw.Write([]byte("<w:document><w:body><w:p><w:r><w:t>"))
	fw.Write(make([]byte, size))
	fw.Close()
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	hw, err := zw.CreateRaw(&zip.FileHeader{Name: "word/document.xml", Method: zip.Deflate,
		CompressedSize64: uint64(packed.Len()), UncompressedSize64: 100})
	if err != nil {
		t.Fatal(err)
	}
	hw.Write(packed.Bytes())
	zw.Close()
	return out.Bytes()
}

func locators(t *testing.T, st *store.Store, src *store.KnowledgeSource) []string {
	t.Helper()
	cs, err := st.Tenant(tenant).Knowledge().Chunks(context.Background(), src.BaseID, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range cs {
		out = append(out, c.Locator)
	}
	return out
}

func TestIndexing(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := &store.Tenant{Slug: "acme", Name: "Acme"}
		if err := st.Tenants().Create(ctx, tn); err != nil {
			t.Fatal(err)
		}
		tenant = tn.ID
		t.Run("a markdown file and Q&A pairs go from queued to ready with their chunks and vectors", func(t *testing.T) {
			w, s, b := setup(t, st, "guide", "fake", ingest.Options{})
			md := addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceFile, Filename: "guide.md", ContentType: "text/markdown", Content: []byte(guide)})
			qa := addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceQA, ContentType: extract.QAContentType,
				Content: []byte(`[{"question":"How do I install?","answer":"Use apt."},{"question":"Is it free?","answer":"Yes."}]`)})
			drain(t, w)
			got := source(t, st, md)
			if got.Status != store.SourceReady || got.Chunks != 3 || got.Error != "" {
				t.Fatalf("markdown source: status %s, %d chunks, error %q", got.Status, got.Chunks, got.Error)
			}
			if l := strings.Join(locators(t, st, md), "; "); l != "Guide; Guide > Install > Linux; Guide > Install > macOS" {
				t.Errorf("locators %q", l)
			}
			if got := source(t, st, qa); got.Status != store.SourceReady || got.Chunks != 2 {
				t.Fatalf("qa source: status %s, %d chunks, error %q", got.Status, got.Chunks, got.Error)
			}
			base, _ := st.Tenant(tenant).Knowledge().Base(ctx, b.ID)
			if base.EmbeddingDims != llmtest.EmbeddingDims {
				t.Errorf("the base holds vectors of %d dimensions", base.EmbeddingDims)
			}
			if len(s.Requests()) == 0 {
				t.Error("nothing was embedded")
			}
		})
		t.Run("chunks are embedded in batches of BatchSize", func(t *testing.T) {
			w, s, b := setup(t, st, "batches", "fake", ingest.Options{BatchSize: 2})
			src := addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceFile, Filename: "faq.jsonl",
				Content: []byte("{\"question\":\"a?\",\"answer\":\"1\"}\n{\"question\":\"b?\",\"answer\":\"2\"}\n{\"question\":\"c?\",\"answer\":\"3\"}\n{\"question\":\"d?\",\"answer\":\"4\"}\n{\"question\":\"e?\",\"answer\":\"5\"}\n")})
			drain(t, w)
			if got := source(t, st, src); got.Status != store.SourceReady || got.Chunks != 5 {
				t.Fatalf("status %s, %d chunks, error %q", got.Status, got.Chunks, got.Error)
			}
			if n := len(s.Requests()); n != 3 {
				t.Errorf("%d embedding requests, want 3", n)
			}
		})
		t.Run("a base without an embedding provider is indexed for keyword search only", func(t *testing.T) {
			w, s, b := setup(t, st, "keywords", "", ingest.Options{})
			src := addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceText, ContentType: "text/plain; charset=utf-8", Content: []byte("Opening hours are nine to five.")})
			drain(t, w)
			if got := source(t, st, src); got.Status != store.SourceReady || got.Chunks != 1 {
				t.Fatalf("status %s, %d chunks, error %q", got.Status, got.Chunks, got.Error)
			}
			if len(s.Requests()) != 0 {
				t.Error("a keyword-only base was embedded")
			}
		})
		t.Run("a rate-limited embedding is retried after the wait the provider asked for", func(t *testing.T) {
			clock := newClock()
			w, s, b := setup(t, st, "ratelimited", "fake", ingest.Options{Now: clock.Now})
			src := addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceText, ContentType: "text/plain", Content: []byte("Refunds take five days.")})
			s.FailEmbeddings(*llmtest.RateLimited("120").Fault)
			if _, err := w.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			got := source(t, st, src)
			if want := clock.Now().Add(2 * time.Minute); got.Status != store.SourceQueued || !strings.Contains(got.Error, "rate_limit") || got.NextAttemptAt == nil ||
				!got.NextAttemptAt.Equal(want) {
				t.Fatalf("status %s, error %q, next attempt %v, want %v", got.Status, got.Error, got.NextAttemptAt, want)
			}
			if n, _ := w.RunOnce(ctx); n != 0 {
				t.Fatal("the retry ran before its time")
			}
			clock.Advance(2 * time.Minute)
			if _, err := w.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			if got := source(t, st, src); got.Status != store.SourceReady || got.Error != "" || got.Chunks != 1 {
				t.Fatalf("after the retry: status %s, error %q", got.Status, got.Error)
			}
		})
		t.Run("an embedding provider that keeps answering 429 is retried with backoff, then the source fails saying why", func(t *testing.T) {
			clock := newClock()
			w, s, b := setup(t, st, "busy", "fake", ingest.Options{Now: clock.Now, MaxAttempts: 3})
			src := addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceText, ContentType: "text/plain", Content: []byte("Busy all day.")})
			s.FailEmbeddings(*llmtest.RateLimited("").Fault, *llmtest.RateLimited("").Fault, *llmtest.RateLimited("").Fault)
			var waits []time.Duration
			for range 3 {
				before := clock.Now()
				if n, err := w.RunOnce(ctx); err != nil || n != 1 {
					t.Fatalf("claimed %d, %v", n, err)
				}
				got := source(t, st, src)
				if got.NextAttemptAt != nil {
					waits = append(waits, got.NextAttemptAt.Sub(before))
					clock.Advance(got.NextAttemptAt.Sub(before))
				}
			}
			got := source(t, st, src)
			if got.Status != store.SourceFailed || !strings.Contains(got.Error, "rate_limit") || !strings.Contains(got.Error, "gave up after 3 attempts") {
				t.Fatalf("status %s, error %q", got.Status, got.Error)
			}
			if want := []time.Duration{time.Minute, 5 * time.Minute}; !slices.Equal(waits, want) {
				t.Errorf("waited %v between attempts, want %v", waits, want)
			}
		})
		t.Run("vectors of another length than the base's fail the source with a clear reason", func(t *testing.T) {
			w, _, b := setup(t, st, "dims", "fake", ingest.Options{})
			// The base's vectors came from a model of 1536 dimensions; the
			// provider of that name now answers 256.
			if err := st.DB().Model(&store.KnowledgeBase{}).Where("id = ?", b.ID).Update("embedding_dims", 1536).Error; err != nil {
				t.Fatal(err)
			}
			src := addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceText, ContentType: "text/plain", Content: []byte("Dimensions differ.")})
			drain(t, w)
			got := source(t, st, src)
			if got.Status != store.SourceFailed || !strings.Contains(got.Error, "256 dimensions, the base's vectors 1536") ||
				!strings.Contains(got.Error, "reindex") || got.Attempts != 1 {
				t.Fatalf("status %s, error %q, attempts %d", got.Status, got.Error, got.Attempts)
			}
		})
		t.Run("a DOCX that is a zip bomb lying about its sizes fails at once", func(t *testing.T) {
			w, _, b := setup(t, st, "bomb", "", ingest.Options{})
			src := addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceFile, Filename: "report.docx", Content: lyingZip(t, 8<<20)})
			drain(t, w)
			got := source(t, st, src)
			if got.Status != store.SourceFailed || !strings.Contains(got.Error, "unpacks to more than it declares") {
				t.Fatalf("status %s, error %q", got.Status, got.Error)
			}
		})
		t.Run("a corrupt PDF fails at once with its reason", func(t *testing.T) {
			w, _, b := setup(t, st, "corrupt", "fake", ingest.Options{})
			src := addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceFile, Filename: "manual.pdf", ContentType: "application/pdf", Content: []byte("%PDF-1.4\nnot really a pdf")})
			drain(t, w)
			got := source(t, st, src)
			if got.Status != store.SourceFailed || !strings.Contains(got.Error, "PDF is corrupt") || got.NextAttemptAt != nil {
				t.Fatalf("status %s, error %q, next attempt %v", got.Status, got.Error, got.NextAttemptAt)
			}
		})
		t.Run("the sources that become ready or fail for good are told, a retry is not", func(t *testing.T) {
			var told []string
			settled := func(_ context.Context, src *store.KnowledgeSource) { told = append(told, src.Filename+" "+src.Status) }
			w, s, b := setup(t, st, "settled", "fake", ingest.Options{Settled: settled})
			addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceFile, Filename: "ok.md", Content: []byte("# Fine\n\nAll is well.")})
			drain(t, w)
			addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceFile, Filename: "bad.txt", Content: []byte("\xff")})
			drain(t, w)
			s.FailEmbeddings(*llmtest.RateLimited("60").Fault)
			addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceFile, Filename: "later.md", Content: []byte("# Later\n\nSee you.")})
			drain(t, w)
			if got := strings.Join(told, ", "); got != "ok.md ready, bad.txt failed" {
				t.Fatalf("told %q", got)
			}
		})
		t.Run("a web page is fetched through the outbound policy, and not indexed again while unchanged", func(t *testing.T) {
			var conditional []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" {
					http.NotFound(w, r)
					return
				}
				conditional = append(conditional, r.Header.Get("If-None-Match"))
				if r.Header.Get("If-None-Match") == `"v1"` {
					w.WriteHeader(http.StatusNotModified)
					return
				}
				w.Header().Set("ETag", `"v1"`)
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Write([]byte(`<title>Shop</title><nav>Menu</nav><h1>Returns</h1><p>Returns are free for thirty days.</p>`))
			}))
			defer srv.Close()
			addr := netip.MustParseAddrPort(strings.TrimPrefix(srv.URL, "http://"))
			policy := outbound.Policy{AllowCIDRs: []netip.Prefix{netip.PrefixFrom(addr.Addr(), 32)}, ExtraPorts: []int{int(addr.Port())}}
			w, _, b := setup(t, st, "pages", "fake", ingest.Options{Outbound: policy})
			src := addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceURL, URL: srv.URL + "/returns"})
			drain(t, w)
			got := source(t, st, src)
			if got.Status != store.SourceReady || got.Chunks != 1 || got.ETag != `"v1"` {
				t.Fatalf("status %s, %d chunks, etag %q, error %q", got.Status, got.Chunks, got.ETag, got.Error)
			}
			if err := st.Tenant(tenant).Knowledge().RefreshSource(ctx, b.ID, src.ID); err != nil {
				t.Fatal(err)
			}
			drain(t, w)
			if got := source(t, st, src); got.Status != store.SourceReady || got.Chunks != 1 {
				t.Fatalf("after the refresh: status %s, %d chunks, error %q", got.Status, got.Chunks, got.Error)
			}
			if want := []string{"", `"v1"`}; !slices.Equal(conditional, want) {
				t.Errorf("If-None-Match sent %q, want %q", conditional, want)
			}
		})
		t.Run("a page with the same content as another source fails saying which", func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				w.Write([]byte("The same words on every page."))
			}))
			defer srv.Close()
			addr := netip.MustParseAddrPort(strings.TrimPrefix(srv.URL, "http://"))
			policy := outbound.Policy{AllowCIDRs: []netip.Prefix{netip.PrefixFrom(addr.Addr(), 32)}, ExtraPorts: []int{int(addr.Port())}}
			w, _, b := setup(t, st, "mirrors", "", ingest.Options{Outbound: policy})
			first := addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceURL, URL: srv.URL + "/a"})
			drain(t, w)
			second := addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceURL, URL: srv.URL + "/b"})
			drain(t, w)
			got := source(t, st, second)
			if got.Status != store.SourceFailed || got.Error != "the same content as source "+first.ID {
				t.Fatalf("status %s, error %q", got.Status, got.Error)
			}
		})
		t.Run("a page the outbound policy refuses fails at once", func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("the page was fetched") }))
			defer srv.Close()
			w, _, b := setup(t, st, "private", "", ingest.Options{})
			src := addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceURL, URL: srv.URL + "/"})
			drain(t, w)
			if got := source(t, st, src); got.Status != store.SourceFailed || !strings.Contains(got.Error, "destination") {
				t.Fatalf("status %s, error %q", got.Status, got.Error)
			}
		})
	})
}
