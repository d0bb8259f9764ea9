package retrieve_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/knowledge/retrieve"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// chunk is a hand-made chunk: its text and its vector.
type chunk struct {
	text string
	vec  []float32
}

type fixture struct {
	t      *testing.T
	st     *store.Store
	tenant string
	base   *store.KnowledgeBase
}

func newFixture(t *testing.T, st *store.Store, slug string) *fixture {
	t.Helper()
	ctx := context.Background()
	tn := &store.Tenant{Slug: slug, Name: slug}
	if err := st.Tenants().Create(ctx, tn); err != nil {
		t.Fatal(err)
	}
	b := &store.KnowledgeBase{Slug: "help", Name: "Help", Language: "english"}
	if err := st.Tenant(tn.ID).Knowledge().CreateBase(ctx, b); err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, st: st, tenant: tn.ID, base: b}
}

// add queues a source of chunks, tagged.
func (f *fixture) add(title string, tags []string, chunks ...chunk) *store.KnowledgeSource {
	f.t.Helper()
	src := &store.KnowledgeSource{Kind: store.SourceText, Title: title, Tags: tags,
		ContentHash: fmt.Sprintf("%x", sha256.Sum256(fmt.Append(nil, title, chunks)))}
	if _, err := f.st.Tenant(f.tenant).Knowledge().AddSource(context.Background(), f.base.ID, src); err != nil {
		f.t.Fatal(err)
	}
	f.work(map[string][]chunk{src.ID: chunks})
	return src
}

// work indexes the due sources in bySource with their chunks; the others
// are put back, due at once.
func (f *fixture) work(bySource map[string][]chunk) {
	f.t.Helper()
	ctx := context.Background()
	jobs := f.st.KnowledgeJobs()
	claimed, err := jobs.Claim(ctx, "test/worker", time.Minute, 100, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, src := range claimed {
		chunks, ok := bySource[src.ID]
		if !ok {
			if err := jobs.Fail(ctx, &src, "not now", time.Now().UTC()); err != nil {
				f.t.Fatal(err)
			}
			continue
		}
		rows := make([]store.KnowledgeChunk, len(chunks))
		for i, c := range chunks {
			rows[i] = store.KnowledgeChunk{Ordinal: i, Text: c.text, Locator: fmt.Sprintf("#%d", i), Embedding: c.vec}
		}
		if err := jobs.Done(ctx, &src, store.KnowledgeIndexed{ContentHash: src.ContentHash, Chunks: rows}); err != nil {
			f.t.Fatal(err)
		}
	}
}

func (f *fixture) search(s *retrieve.Searcher, q retrieve.Query) []retrieve.Result {
	f.t.Helper()
	got, err := s.Search(context.Background(), f.tenant, f.base.Slug, q)
	if err != nil {
		f.t.Fatal(err)
	}
	return got
}

func texts(rs []retrieve.Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Text
	}
	return out
}

func TestHybridSearch(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newFixture(t, st, "retrieve-hybrid")
		billing := f.add("Billing", []string{"billing"},
			chunk{"Refunds are paid to the original card.", []float32{1, 0, 0}},
			chunk{"Invoices are emailed monthly.", []float32{0.8, 0.6, 0}})
		f.add("Account", []string{"account"},
			chunk{"Reset a password from the login page.", []float32{0, 1, 0}},
			chunk{"Refunds of annual plans are prorated.", []float32{0.6, 0.8, 0}})
		s := retrieve.New(ctx, st, nil)

		t.Run("vectors rank by cosine to the query", func(t *testing.T) {
			got := f.search(s, retrieve.Query{Text: "zzz", Vector: []float32{1, 0.1, 0}, TopK: 4})
			want := []string{"Refunds are paid to the original card.", "Invoices are emailed monthly.",
				"Refunds of annual plans are prorated.", "Reset a password from the login page."}
			if !slices.Equal(texts(got), want) {
				t.Fatalf("found %q", texts(got))
			}
			for i, r := range got {
				if r.VectorRank != i+1 || r.KeywordRank != 0 {
					t.Fatalf("result %d ranks %+v", i, r)
				}
			}
		})
		t.Run("a chunk both searches find beats one only a search finds first", func(t *testing.T) {
			// Keyword: the two refund chunks; vector: the password chunk,
			// then the prorated refund chunk.
			got := f.search(s, retrieve.Query{Text: "refunds prorated", Vector: []float32{0, 1, 0}, TopK: 10})
			if len(got) == 0 || got[0].Text != "Refunds of annual plans are prorated." || got[0].KeywordRank != 1 || got[0].VectorRank != 2 {
				t.Fatalf("first %+v", got)
			}
			if got[0].Title != "Account" || got[0].Chunk != 1 || got[0].Locator != "#1" || got[0].Source == "" {
				t.Fatalf("citation fields %+v", got[0])
			}
		})
		t.Run("a mode runs one search alone", func(t *testing.T) {
			q := retrieve.Query{Text: "refunds prorated", Vector: []float32{0, 1, 0}, TopK: 10, Mode: retrieve.KeywordOnly}
			got := f.search(s, q)
			if len(got) != 2 || got[0].Text != "Refunds of annual plans are prorated." {
				t.Fatalf("keyword only found %q", texts(got))
			}
			for _, r := range got {
				if r.VectorRank != 0 {
					t.Fatalf("keyword only ranked by vector: %+v", r)
				}
			}
			q.Mode = retrieve.VectorOnly
			got = f.search(s, q)
			if len(got) != 4 || got[0].Text != "Reset a password from the login page." {
				t.Fatalf("vector only found %q", texts(got))
			}
			for i, r := range got {
				if r.KeywordRank != 0 || r.VectorRank != i+1 {
					t.Fatalf("vector only result %d ranks %+v", i, r)
				}
			}
		})
		t.Run("top_k bounds the results", func(t *testing.T) {
			if got := f.search(s, retrieve.Query{Text: "refunds", Vector: []float32{1, 0, 0}, TopK: 2}); len(got) != 2 {
				t.Fatalf("found %d", len(got))
			}
		})
		t.Run("min score drops what only one search found low", func(t *testing.T) {
			got := f.search(s, retrieve.Query{Text: "refunds", Vector: []float32{1, 0, 0}, TopK: 10, MinScore: 0.6})
			for _, r := range got {
				if r.KeywordRank == 0 || r.VectorRank == 0 {
					t.Fatalf("kept %+v", r)
				}
			}
			if len(got) == 0 {
				t.Fatal("dropped everything")
			}
		})
		t.Run("tags keep only their sources, in both searches", func(t *testing.T) {
			got := f.search(s, retrieve.Query{Text: "refunds password", Vector: []float32{0, 1, 0}, TopK: 10, Tags: []string{"billing"}})
			if len(got) != 2 {
				t.Fatalf("found %q", texts(got))
			}
			for _, r := range got {
				if r.Source != billing.ID {
					t.Fatalf("found %+v", r)
				}
			}
		})
		t.Run("a query vector of the wrong size is an error", func(t *testing.T) {
			if _, err := s.Search(ctx, f.tenant, f.base.ID, retrieve.Query{Text: "x", Vector: []float32{1, 0}}); err == nil {
				t.Fatal("no error")
			}
		})
		t.Run("another tenant's base is not found", func(t *testing.T) {
			other := newFixture(t, st, "retrieve-other")
			_, err := s.Search(ctx, other.tenant, f.base.ID, retrieve.Query{Text: "refunds", Vector: []float32{1, 0, 0}})
			if err == nil {
				t.Fatal("searched another tenant's base")
			}
			if got := other.search(s, retrieve.Query{Text: "refunds", Vector: []float32{1, 0, 0}}); len(got) != 0 {
				t.Fatalf("found %q in an empty base", texts(got))
			}
		})
		t.Run("a deleted source leaves the cached vectors", func(t *testing.T) {
			if err := st.Tenant(f.tenant).Knowledge().DeleteSource(ctx, f.base.ID, billing.ID); err != nil {
				t.Fatal(err)
			}
			for _, r := range f.search(s, retrieve.Query{Text: "zzz", Vector: []float32{1, 0, 0}, TopK: 10}) {
				if r.Source == billing.ID {
					t.Fatalf("found %+v", r)
				}
			}
		})
	})
}

func TestSearchesReadTheCurrentGenerationUntilAReindexSwaps(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newFixture(t, st, "retrieve-reindex")
		a := f.add("A", nil, chunk{"old shipping policy", []float32{1, 0}})
		b := f.add("B", nil, chunk{"old returns policy", []float32{0, 1}})
		s := retrieve.New(ctx, st, nil)
		query := retrieve.Query{Text: "zzz", Vector: []float32{1, 0}, TopK: 5}
		if got := texts(f.search(s, query)); !slices.Equal(got, []string{"old shipping policy", "old returns policy"}) {
			t.Fatalf("before: %q", got)
		}
		if _, err := st.Tenant(f.tenant).Knowledge().Reindex(ctx, f.base.ID, "", ""); err != nil {
			t.Fatal(err)
		}
		// Re-embedded by a new model: the vectors point the other way.
		f.work(map[string][]chunk{a.ID: {{"new shipping policy", []float32{0, 1}}}})
		t.Run("while a source is left, searches read the old generation", func(t *testing.T) {
			if got := texts(f.search(s, query)); !slices.Equal(got, []string{"old shipping policy", "old returns policy"}) {
				t.Fatalf("found %q", got)
			}
		})
		f.work(map[string][]chunk{b.ID: {{"new returns policy", []float32{1, 0}}}})
		t.Run("after the swap, the new generation's chunks and vectors", func(t *testing.T) {
			got := f.search(s, query)
			if !slices.Equal(texts(got), []string{"new returns policy", "new shipping policy"}) || got[0].VectorRank != 1 {
				t.Fatalf("found %+v", got)
			}
		})
	})
}

func TestCachedVectorsFollowEveryWrite(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newFixture(t, st, "retrieve-cache")
		a := f.add("A", nil, chunk{"alpha", []float32{1, 0, 0}})
		s := retrieve.New(ctx, st, nil)
		nearest := func(v ...float32) []string {
			t.Helper()
			return texts(f.search(s, retrieve.Query{Text: "zzz", Vector: v, TopK: 10}))
		}
		if got := nearest(1, 0, 0); !slices.Equal(got, []string{"alpha"}) {
			t.Fatalf("found %q", got)
		}
		t.Run("a source added since is found", func(t *testing.T) {
			f.add("B", nil, chunk{"beta", []float32{0, 1, 0}})
			if got := nearest(0, 1, 0); !slices.Equal(got, []string{"beta", "alpha"}) {
				t.Fatalf("found %q", got)
			}
		})
		t.Run("a source indexed again is found by its new vectors only", func(t *testing.T) {
			if err := st.Tenant(f.tenant).Knowledge().RefreshSource(ctx, f.base.ID, a.ID); err != nil {
				t.Fatal(err)
			}
			f.work(map[string][]chunk{a.ID: {{"alpha again", []float32{0, 0, 1}}}})
			if got := nearest(0, 0, 1); !slices.Equal(got, []string{"alpha again", "beta"}) {
				t.Fatalf("found %q", got)
			}
		})
	})
}
