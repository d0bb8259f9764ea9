package store_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

func mustBase(t *testing.T, st *store.Store, tenantID, slug string) *store.KnowledgeBase {
	t.Helper()
	b := &store.KnowledgeBase{Slug: slug, Name: "Base " + slug, Language: "english"}
	if err := st.Tenant(tenantID).Knowledge().CreateBase(context.Background(), b); err != nil {
		t.Fatalf("create knowledge base %s: %v", slug, err)
	}
	return b
}

// mustIndex adds a source holding texts (one chunk each, hashed by its
// content) and indexes it through the job queue.
func mustIndex(t *testing.T, st *store.Store, tenantID, baseID string, src store.KnowledgeSource, texts ...string) *store.KnowledgeSource {
	t.Helper()
	ctx := context.Background()
	if src.Kind == "" {
		src.Kind = store.SourceText
	}
	if src.ContentHash == "" {
		src.ContentHash = fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(fmt.Sprint(texts))))
	}
	if _, err := st.Tenant(tenantID).Knowledge().AddSource(ctx, baseID, &src); err != nil {
		t.Fatalf("add source: %v", err)
	}
	claimed, err := st.KnowledgeJobs().Claim(ctx, "test/"+src.ID, time.Minute, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(claimed, func(s store.KnowledgeSource) bool { return s.ID == src.ID })
	if i < 0 {
		t.Fatalf("claimed %d sources, not %s", len(claimed), src.ID)
	}
	chunks := make([]store.KnowledgeChunk, len(texts))
	for j, text := range texts {
		chunks[j] = store.KnowledgeChunk{Ordinal: j, Text: text, Locator: fmt.Sprintf("#p%d", j), Tokens: len(text) / 4,
			Embedding: []float32{float32(j + 1), 1, 0}}
	}
	if err := st.KnowledgeJobs().Done(ctx, &claimed[i], store.KnowledgeIndexed{ContentHash: src.ContentHash, Chunks: chunks}); err != nil {
		t.Fatalf("index source: %v", err)
	}
	got, err := st.Tenant(tenantID).Knowledge().Source(ctx, baseID, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func keywordTexts(t *testing.T, st *store.Store, tenantID, baseID, query string, tags ...string) []string {
	t.Helper()
	return filteredTexts(t, st, tenantID, baseID, query, store.TagFilter{Tags: tags})
}

func filteredTexts(t *testing.T, st *store.Store, tenantID, baseID, query string, filter store.TagFilter) []string {
	t.Helper()
	ctx := context.Background()
	kn := st.Tenant(tenantID).Knowledge()
	b, err := kn.Base(ctx, baseID)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := kn.KeywordSearch(ctx, b, query, filter, 10)
	if err != nil {
		t.Fatal(err)
	}
	hits, err := kn.Hits(ctx, b.ID, ids)
	if err != nil {
		t.Fatal(err)
	}
	text := map[int64]string{}
	for _, h := range hits {
		text[h.ChunkID] = h.Text
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = text[id]
	}
	return out
}

func countRows(t *testing.T, st *store.Store, table, where string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := st.DB().Table(table).Where(where, args...).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAnotherTenantsKnowledgeIsUnreachable(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		a, b := mustTenant(t, st, "kb-a"), mustTenant(t, st, "kb-b")
		base := mustBase(t, st, a.ID, "help")
		src := mustIndex(t, st, a.ID, base.ID, store.KnowledgeSource{Title: "Passwords"}, "reset your password from the login page")
		other := st.Tenant(b.ID).Knowledge()
		t.Run("the base is not found by id or slug", func(t *testing.T) {
			for _, ref := range []string{base.ID, base.Slug} {
				_, err := other.Base(ctx, ref)
				wantErr(t, err, store.ErrNotFound)
			}
			if bases, _ := other.Bases(ctx); len(bases) != 0 {
				t.Fatalf("listed %d bases of another tenant", len(bases))
			}
		})
		t.Run("its sources and chunks are not found", func(t *testing.T) {
			_, err := other.Source(ctx, base.ID, src.ID)
			wantErr(t, err, store.ErrNotFound)
			if srcs, _ := other.Sources(ctx, base.ID); len(srcs) != 0 {
				t.Fatalf("listed %d sources", len(srcs))
			}
			_, err = other.Chunks(ctx, base.ID, src.ID)
			wantErr(t, err, store.ErrNotFound)
			wantErr(t, other.DeleteSource(ctx, base.ID, src.ID), store.ErrNotFound)
			wantErr(t, other.RefreshSource(ctx, base.ID, src.ID), store.ErrNotFound)
			wantErr(t, other.DeleteBase(ctx, base.ID), store.ErrNotFound)
			_, err = other.AddSource(ctx, base.ID, &store.KnowledgeSource{Kind: store.SourceText, ContentHash: "x"})
			wantErr(t, err, store.ErrNotFound)
		})
		t.Run("its chunks are found by no search", func(t *testing.T) {
			// The base row as tenant a reads it, handed to tenant b's searches.
			if ids, err := other.KeywordSearch(ctx, base, "password", store.TagFilter{}, 10); err != nil || len(ids) != 0 {
				t.Fatalf("keyword search found %v, %v", ids, err)
			}
			chunks, err := st.Tenant(a.ID).Knowledge().Chunks(ctx, base.ID, src.ID)
			if err != nil || len(chunks) != 1 {
				t.Fatalf("own chunks: %d, %v", len(chunks), err)
			}
			if hits, err := other.Hits(ctx, base.ID, []int64{chunks[0].ID}); err != nil || len(hits) != 0 {
				t.Fatalf("hits %v, %v", hits, err)
			}
			n := 0
			if err := other.EachVector(ctx, base.ID, base.Generation, nil, func(int64, string, []float32) { n++ }); err != nil || n != 0 {
				t.Fatalf("read %d vectors, %v", n, err)
			}
			if got := keywordTexts(t, st, a.ID, base.ID, "password"); len(got) != 1 {
				t.Fatalf("own search found %v", got)
			}
		})
	})
}

func TestTheSameContentAddedTwiceIsOneSource(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "kb-dedupe")
		base := mustBase(t, st, tn.ID, "help")
		kn := st.Tenant(tn.ID).Knowledge()
		first := &store.KnowledgeSource{Kind: store.SourceFile, Filename: "a.pdf", ContentHash: "sha256:abc", Bytes: 10}
		if created, err := kn.AddSource(ctx, base.ID, first); err != nil || !created {
			t.Fatalf("first: created %v, %v", created, err)
		}
		again := &store.KnowledgeSource{Kind: store.SourceFile, Filename: "copy.pdf", ContentHash: "sha256:abc", Bytes: 10}
		created, err := kn.AddSource(ctx, base.ID, again)
		if err != nil || created || again.ID != first.ID || again.Filename != "a.pdf" {
			t.Fatalf("again: created %v, %v, got %s %s; want the first source", created, err, again.ID, again.Filename)
		}
		if n := countRows(t, st, "knowledge_sources", "base_id = ?", base.ID); n != 1 {
			t.Fatalf("%d sources", n)
		}
		t.Run("another base may hold the same content", func(t *testing.T) {
			other := mustBase(t, st, tn.ID, "other")
			src := &store.KnowledgeSource{Kind: store.SourceFile, ContentHash: "sha256:abc"}
			if created, err := kn.AddSource(ctx, other.ID, src); err != nil || !created {
				t.Fatalf("created %v, %v", created, err)
			}
		})
	})
}

func TestDeletingASourceRemovesItsChunksAndVectors(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "kb-delete")
		base := mustBase(t, st, tn.ID, "help")
		gone := mustIndex(t, st, tn.ID, base.ID, store.KnowledgeSource{}, "billing happens monthly", "invoices are emailed")
		kept := mustIndex(t, st, tn.ID, base.ID, store.KnowledgeSource{}, "billing questions go to support")
		kn := st.Tenant(tn.ID).Knowledge()
		if err := kn.DeleteSource(ctx, base.ID, gone.ID); err != nil {
			t.Fatal(err)
		}
		if n := countRows(t, st, "knowledge_chunks", "source_id = ?", gone.ID); n != 0 {
			t.Fatalf("%d chunks left", n)
		}
		if n := countRows(t, st, "knowledge_embeddings", "base_id = ?", base.ID); n != 1 {
			t.Fatalf("%d vectors, want the kept source's one", n)
		}
		if got := keywordTexts(t, st, tn.ID, base.ID, "billing invoices"); !slices.Equal(got, []string{"billing questions go to support"}) {
			t.Fatalf("search found %q", got)
		}
		t.Run("deleting the base removes everything", func(t *testing.T) {
			if err := kn.DeleteBase(ctx, base.ID); err != nil {
				t.Fatal(err)
			}
			for _, table := range []string{"knowledge_sources", "knowledge_chunks", "knowledge_embeddings"} {
				if n := countRows(t, st, table, "base_id = ?", base.ID); n != 0 {
					t.Fatalf("%d rows left in %s", n, table)
				}
			}
			if n := countRows(t, st, "knowledge_source_tags", "source_id = ?", kept.ID); n != 0 {
				t.Fatalf("%d tags left", n)
			}
		})
	})
}

func TestKeywordSearchRanksChunksByTheirWords(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		tn := mustTenant(t, st, "kb-keyword")
		base := mustBase(t, st, tn.ID, "help")
		mustIndex(t, st, tn.ID, base.ID, store.KnowledgeSource{Tags: []string{"billing"}},
			"Refunds are paid to the original card within five days.",
			"Our office is closed on public holidays.")
		mustIndex(t, st, tn.ID, base.ID, store.KnowledgeSource{Tags: []string{"account"}},
			"To reset a password, open the login page and choose forgot password; the password reset link expires.",
			"Passwords must have twelve characters.")
		t.Run("the chunk holding the query's words most often comes first", func(t *testing.T) {
			got := keywordTexts(t, st, tn.ID, base.ID, "how do I reset my password?")
			if len(got) == 0 || got[0] != "To reset a password, open the login page and choose forgot password; the password reset link expires." {
				t.Fatalf("found %q", got)
			}
		})
		t.Run("a chunk with none of the words is not found", func(t *testing.T) {
			for _, text := range keywordTexts(t, st, tn.ID, base.ID, "reset password") {
				if text == "Our office is closed on public holidays." {
					t.Fatalf("found %q", text)
				}
			}
		})
		t.Run("the language's stop words match nothing", func(t *testing.T) {
			// "the" is in the password chunk too.
			got := keywordTexts(t, st, tn.ID, base.ID, "where are the refunds?")
			if !slices.Equal(got, []string{"Refunds are paid to the original card within five days."}) {
				t.Fatalf("found %q", got)
			}
		})
		t.Run("query syntax is read as words", func(t *testing.T) {
			got := keywordTexts(t, st, tn.ID, base.ID, `refunds" OR NEAR(* card:`)
			if len(got) == 0 || got[0] != "Refunds are paid to the original card within five days." {
				t.Fatalf("found %q", got)
			}
		})
		t.Run("a chunk holding every word is found among thousands holding one", func(t *testing.T) {
			texts := make([]string, 1500)
			for i := range texts {
				texts[i] = fmt.Sprintf("delivery note %d", i)
			}
			texts[1234] = "delivery times for express parcels"
			mustIndex(t, st, tn.ID, base.ID, store.KnowledgeSource{}, texts...)
			if got := keywordTexts(t, st, tn.ID, base.ID, "express delivery parcels"); len(got) == 0 || got[0] != texts[1234] {
				t.Fatalf("found %q", got)
			}
		})
		t.Run("tags keep only their sources' chunks", func(t *testing.T) {
			got := keywordTexts(t, st, tn.ID, base.ID, "password refunds", "billing")
			if !slices.Equal(got, []string{"Refunds are paid to the original card within five days."}) {
				t.Fatalf("found %q", got)
			}
			if got := keywordTexts(t, st, tn.ID, base.ID, "password refunds", "nope"); len(got) != 0 {
				t.Fatalf("found %q under an unknown tag", got)
			}
		})
		t.Run("untagged keeps the sources without tags, with or without tags of its own", func(t *testing.T) {
			ctx := context.Background()
			kn := st.Tenant(tn.ID).Knowledge()
			got := filteredTexts(t, st, tn.ID, base.ID, "express refunds password", store.TagFilter{Untagged: true})
			if !slices.Equal(got, []string{"delivery times for express parcels"}) {
				t.Fatalf("untagged only: found %q", got)
			}
			got = filteredTexts(t, st, tn.ID, base.ID, "express refunds password", store.TagFilter{Tags: []string{"billing"}, Untagged: true})
			if !slices.Contains(got, "delivery times for express parcels") || !slices.Contains(got, "Refunds are paid to the original card within five days.") ||
				slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "assword") }) {
				t.Fatalf("billing and untagged: found %q", got)
			}
			srcs, err := kn.FilteredSources(ctx, base.ID, store.TagFilter{Tags: []string{"account"}, Untagged: true})
			if err != nil || len(srcs) != 2 {
				t.Fatalf("account and untagged sources: %v, %v", srcs, err)
			}
		})
	})
}

func TestKeywordSearchWeighsRareWordsAboveCommonOnes(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		tn := mustTenant(t, st, "kb-rare")
		base := mustBase(t, st, tn.ID, "help")
		texts := make([]string, 300)
		for i := range texts {
			texts[i] = fmt.Sprintf("Every table column holds a value of its type, as row %d shows.", i)
		}
		rare := "A unique constraint will reject any duplicate."
		texts[123] = rare
		mustIndex(t, st, tn.ID, base.ID, store.KnowledgeSource{}, texts...)
		if st.Dialect() == store.DialectPostgres {
			// The word statistics PostgreSQL weighs by, as autovacuum
			// gathers them.
			if err := st.DB().Exec("ANALYZE knowledge_chunks").Error; err != nil {
				t.Fatal(err)
			}
		}
		// Three common words against two rare ones.
		got := keywordTexts(t, st, tn.ID, base.ID, "make a table column reject duplicate values")
		if len(got) == 0 || got[0] != rare {
			t.Fatalf("found %q first", got[:min(len(got), 2)])
		}
	})
}

func TestKnowledgeSourcesAreClaimedByOneWorkerAtATime(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "kb-claim")
		base := mustBase(t, st, tn.ID, "help")
		kn := st.Tenant(tn.ID).Knowledge()
		for i := range 10 {
			if _, err := kn.AddSource(ctx, base.ID, &store.KnowledgeSource{Kind: store.SourceText, ContentHash: fmt.Sprint(i)}); err != nil {
				t.Fatal(err)
			}
		}
		jobs := st.KnowledgeJobs()
		var claimed []store.KnowledgeSource
		t.Run("two claimers never take the same source", func(t *testing.T) {
			var mu sync.Mutex
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Go(func() {
					for range 5 {
						got, err := jobs.Claim(ctx, fmt.Sprintf("%s/w%d", st.Instance(), w), time.Minute, 2, nil)
						if err != nil {
							t.Error(err)
						}
						mu.Lock()
						claimed = append(claimed, got...)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			seen := map[string]bool{}
			for _, s := range claimed {
				if seen[s.ID] {
					t.Fatalf("source %s claimed twice", s.ID)
				}
				seen[s.ID] = true
				if s.Status != store.SourceIndexing || s.Attempts != 1 {
					t.Fatalf("claimed %+v", s)
				}
			}
			if len(seen) != 10 {
				t.Fatalf("claimed %d of 10 sources", len(seen))
			}
		})
		victim := claimed[0]
		t.Run("a claim whose lease ran out is taken over", func(t *testing.T) {
			// The lease lapses: the source is due again.
			past := time.Now().UTC().Add(-time.Second)
			if err := st.DB().Model(&store.KnowledgeSource{}).Where("id = ?", victim.ID).Update("next_attempt_at", past).Error; err != nil {
				t.Fatal(err)
			}
			got, err := jobs.Claim(ctx, st.Instance()+"/late", time.Minute, 10, nil)
			if err != nil || len(got) != 1 || got[0].ID != victim.ID || got[0].Attempts != 2 {
				t.Fatalf("claimed %+v, %v; want the lapsed source", got, err)
			}
			t.Run("and the first worker's late result writes nothing", func(t *testing.T) {
				err := jobs.Done(ctx, &victim, store.KnowledgeIndexed{Chunks: []store.KnowledgeChunk{{Text: "late"}}})
				wantErr(t, err, store.ErrConflict)
				wantErr(t, jobs.Fail(ctx, &victim, "late", time.Time{}), store.ErrConflict)
				if n := countRows(t, st, "knowledge_chunks", "source_id = ?", victim.ID); n != 0 {
					t.Fatalf("%d chunks written", n)
				}
			})
			t.Run("the new worker's result is kept", func(t *testing.T) {
				err := jobs.Done(ctx, &got[0], store.KnowledgeIndexed{Pages: 1, Chunks: []store.KnowledgeChunk{{Text: "on time"}}})
				if err != nil {
					t.Fatal(err)
				}
				src, _ := kn.Source(ctx, base.ID, victim.ID)
				if src.Status != store.SourceReady || src.Chunks != 1 || src.IndexedAt == nil || src.NextAttemptAt != nil || src.Claim != "" {
					t.Fatalf("source %+v", src)
				}
			})
		})
		if st.Dialect() == store.DialectPostgres {
			t.Run("a dead instance's claim is taken at once on PostgreSQL", func(t *testing.T) {
				s := claimed[3]
				if err := st.DB().Model(&store.KnowledgeSource{}).Where("id = ?", s.ID).
					Updates(map[string]any{"claim": "live:dead-host-1-abc/w", "next_attempt_at": time.Now().Add(time.Hour)}).Error; err != nil {
					t.Fatal(err)
				}
				got, err := jobs.Claim(ctx, st.Instance()+"/alive", time.Minute, 10, nil)
				if err != nil || len(got) != 1 || got[0].ID != s.ID {
					t.Fatalf("claimed %+v, %v; want the dead instance's source", got, err)
				}
			})
		}
		t.Run("a failure retries later, then gives up", func(t *testing.T) {
			s := claimed[1]
			if err := jobs.Fail(ctx, &s, "fetch: 503", time.Now().UTC().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			src, _ := kn.Source(ctx, base.ID, s.ID)
			if src.Status != store.SourceQueued || src.Error != "fetch: 503" || src.NextAttemptAt == nil {
				t.Fatalf("source %+v", src)
			}
			s2 := claimed[2]
			if err := jobs.Fail(ctx, &s2, "unsupported content type", time.Time{}); err != nil {
				t.Fatal(err)
			}
			src, _ = kn.Source(ctx, base.ID, s2.ID)
			if src.Status != store.SourceFailed || src.Error != "unsupported content type" || src.NextAttemptAt != nil {
				t.Fatalf("source %+v", src)
			}
		})
	})
}

func TestReindexSwapsInTheNewGenerationWhenComplete(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "kb-reindex")
		base := mustBase(t, st, tn.ID, "help")
		kn := st.Tenant(tn.ID).Knowledge()
		for i := range 2 {
			mustIndex(t, st, tn.ID, base.ID, store.KnowledgeSource{}, fmt.Sprintf("old shipping text %d", i))
		}
		// A new embedding model, of two dimensions instead of three.
		gen, err := kn.Reindex(ctx, base.ID, "fake", "small-2d")
		if err != nil || gen != 2 {
			t.Fatalf("reindex: generation %d, %v", gen, err)
		}
		jobs := st.KnowledgeJobs()
		claimed, err := jobs.Claim(ctx, "test/reindex", time.Minute, 10, nil)
		if err != nil || len(claimed) != 2 {
			t.Fatalf("claimed %d, %v", len(claimed), err)
		}
		index := func(s *store.KnowledgeSource) {
			t.Helper()
			err := jobs.Done(ctx, s, store.KnowledgeIndexed{Chunks: []store.KnowledgeChunk{{Text: "new shipping text " + s.ID,
				Embedding: []float32{1, 0}}}})
			if err != nil {
				t.Fatal(err)
			}
		}
		index(&claimed[0])
		t.Run("searches read the old generation while one source is left", func(t *testing.T) {
			got := keywordTexts(t, st, tn.ID, base.ID, "shipping")
			if len(got) != 2 || got[0][:3] != "old" || got[1][:3] != "old" {
				t.Fatalf("found %q", got)
			}
			b, _ := kn.Base(ctx, base.ID)
			if b.Generation != 1 || b.Building != 2 || b.EmbeddingDims != 3 || b.BuildingModel != "small-2d" || b.BuildingDims != 2 {
				t.Fatalf("base %+v", b)
			}
		})
		index(&claimed[1])
		t.Run("the last source swaps the new generation and its model in", func(t *testing.T) {
			got := keywordTexts(t, st, tn.ID, base.ID, "shipping")
			if len(got) != 2 || got[0][:3] != "new" || got[1][:3] != "new" {
				t.Fatalf("found %q", got)
			}
			b, _ := kn.Base(ctx, base.ID)
			if b.Generation != 2 || b.Building != 0 || b.Revision <= base.Revision || b.EmbeddingModel != "small-2d" ||
				b.EmbeddingDims != 2 || b.BuildingDims != 0 {
				t.Fatalf("base %+v", b)
			}
		})
		t.Run("and the old generation is deleted", func(t *testing.T) {
			if n := countRows(t, st, "knowledge_chunks", "base_id = ? AND generation = 1", base.ID); n != 0 {
				t.Fatalf("%d old chunks", n)
			}
			if n := countRows(t, st, "knowledge_embeddings", "base_id = ?", base.ID); n != 2 {
				t.Fatalf("%d vectors", n)
			}
		})
		t.Run("a base without sources swaps at once", func(t *testing.T) {
			empty := mustBase(t, st, tn.ID, "empty")
			if gen, err := kn.Reindex(ctx, empty.ID, "", ""); err != nil || gen != 2 {
				t.Fatalf("generation %d, %v", gen, err)
			}
			b, _ := kn.Base(ctx, empty.ID)
			if b.Generation != 2 || b.Building != 0 {
				t.Fatalf("base %+v", b)
			}
		})
	})
}

func TestKnowledgeLimitsBoundSourcesBytesAndChunks(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "kb-limits")
		base := mustBase(t, st, tn.ID, "help")
		kn := st.Tenant(tn.ID).Knowledge()
		lim, err := kn.Limits(ctx)
		if err != nil || *lim.MaxSources != store.DefaultKnowledgeSources || *lim.MaxChunks != store.DefaultKnowledgeChunks {
			t.Fatalf("defaults %+v, %v", lim, err)
		}
		two, hundred, three := int64(2), int64(100), int64(3)
		if err := kn.PutLimits(ctx, store.KnowledgeLimits{MaxSources: &two, MaxBytes: &hundred, MaxChunks: &three}); err != nil {
			t.Fatal(err)
		}
		t.Run("a source past the bytes is refused", func(t *testing.T) {
			_, err := kn.AddSource(ctx, base.ID, &store.KnowledgeSource{Kind: store.SourceFile, ContentHash: "big", Bytes: 101})
			wantErr(t, err, store.ErrKnowledgeLimit)
		})
		t.Run("chunks past the limit are refused and the source can fail", func(t *testing.T) {
			if _, err := kn.AddSource(ctx, base.ID, &store.KnowledgeSource{Kind: store.SourceText, ContentHash: "a", Bytes: 10}); err != nil {
				t.Fatal(err)
			}
			got, err := st.KnowledgeJobs().Claim(ctx, "test/limits", time.Minute, 1, nil)
			if err != nil || len(got) != 1 {
				t.Fatalf("claimed %d, %v", len(got), err)
			}
			err = st.KnowledgeJobs().Done(ctx, &got[0], store.KnowledgeIndexed{Chunks: make([]store.KnowledgeChunk, 4)})
			wantErr(t, err, store.ErrKnowledgeLimit)
			if err := st.KnowledgeJobs().Fail(ctx, &got[0], err.Error(), time.Time{}); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("a source past the count is refused", func(t *testing.T) {
			if _, err := kn.AddSource(ctx, base.ID, &store.KnowledgeSource{Kind: store.SourceText, ContentHash: "b"}); err != nil {
				t.Fatal(err)
			}
			_, err := kn.AddSource(ctx, base.ID, &store.KnowledgeSource{Kind: store.SourceText, ContentHash: "c"})
			wantErr(t, err, store.ErrKnowledgeLimit)
		})
	})
}

func TestASourcesContentIsKeptUntilTheSourceIsDeleted(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "kb-content")
		other := mustTenant(t, st, "kb-content-other")
		base := mustBase(t, st, tn.ID, "help")
		kn := st.Tenant(tn.ID).Knowledge()
		src := &store.KnowledgeSource{Kind: store.SourceText, ContentHash: "sha256:text", Content: []byte("refunds take five days")}
		if _, err := kn.AddSource(ctx, base.ID, src); err != nil {
			t.Fatal(err)
		}
		if got, err := kn.Content(ctx, src.ID); err != nil || string(got) != "refunds take five days" {
			t.Fatalf("content %q, %v", got, err)
		}
		listed, err := kn.Sources(ctx, base.ID)
		if err != nil || len(listed) != 1 || listed[0].Content != nil {
			t.Fatalf("listed %+v, %v; want one source without its content", listed, err)
		}
		t.Run("a url source has no content", func(t *testing.T) {
			page := &store.KnowledgeSource{Kind: store.SourceURL, URL: "https://example.com/help"}
			if _, err := kn.AddSource(ctx, base.ID, page); err != nil {
				t.Fatal(err)
			}
			if got, err := kn.Content(ctx, page.ID); err != nil || got != nil {
				t.Fatalf("content %q, %v; want none", got, err)
			}
		})
		t.Run("another tenant cannot read it", func(t *testing.T) {
			if _, err := st.Tenant(other.ID).Knowledge().Content(ctx, src.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("got %v, want ErrNotFound", err)
			}
		})
		t.Run("deleting the source deletes its content", func(t *testing.T) {
			if err := kn.DeleteSource(ctx, base.ID, src.ID); err != nil {
				t.Fatal(err)
			}
			if n := countRows(t, st, "knowledge_source_contents", "source_id = ?", src.ID); n != 0 {
				t.Fatalf("%d content rows left", n)
			}
			if _, err := kn.Content(ctx, src.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("got %v, want ErrNotFound", err)
			}
		})
	})
}

func TestASitemapsPagesAreSourcesOfIt(t *testing.T) {
	t.Parallel()
	mustOpenStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := mustTenant(t, st, "kb-sitemap")
		base := mustBase(t, st, tn.ID, "site")
		kn := st.Tenant(tn.ID).Knowledge()
		own := &store.KnowledgeSource{Kind: store.SourceURL, URL: "https://x.example/a", ContentHash: store.URLSourceHash(store.SourceURL, "https://x.example/a")}
		if _, err := kn.AddSource(ctx, base.ID, own); err != nil {
			t.Fatal(err)
		}
		sm := &store.KnowledgeSource{Kind: store.SourceSitemap, URL: "https://x.example/sitemap.xml", Tags: []string{"web"},
			ContentHash: store.URLSourceHash(store.SourceSitemap, "https://x.example/sitemap.xml")}
		if _, err := kn.AddSource(ctx, base.ID, sm); err != nil {
			t.Fatal(err)
		}
		three := int64(3) // the page, the sitemap and one page more
		if err := kn.PutLimits(ctx, store.KnowledgeLimits{MaxSources: &three}); err != nil {
			t.Fatal(err)
		}
		jobs := st.KnowledgeJobs()
		claimed, err := jobs.Claim(ctx, "test/sitemap", time.Minute, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(claimed, func(s store.KnowledgeSource) bool { return s.ID == sm.ID })
		pages := []store.SitemapPage{{URL: "https://x.example/a"}, {URL: "https://x.example/b"}, {URL: "https://x.example/c"},
			{URL: "http://10.0.0.1/", Skipped: "not fetched"}}
		if err := jobs.DoneSitemap(ctx, &claimed[i], pages, ""); err != nil {
			t.Fatal(err)
		}
		got, _ := kn.Source(ctx, base.ID, sm.ID)
		if got.Status != store.SourceReady || got.Pages != 1 || got.Warning != "2 more pages are not indexed: the tenant's knowledge bases hold at most 3 sources" {
			t.Fatalf("sitemap: status %s, %d pages, warning %q", got.Status, got.Pages, got.Warning)
		}
		all, _ := kn.Sources(ctx, base.ID)
		var made []string
		for _, s := range all {
			if s.ParentID == sm.ID {
				made = append(made, s.URL+" "+s.Status+" "+fmt.Sprint(s.Tags))
			}
		}
		if want := []string{"https://x.example/b queued [web]"}; !slices.Equal(made, want) {
			t.Fatalf("pages %q, want %q (the URL another source holds is left to it)", made, want)
		}
		t.Run("tags of its pages find them", func(t *testing.T) {
			ids, err := kn.FilteredSources(ctx, base.ID, store.TagFilter{Tags: []string{"web"}})
			if err != nil || len(ids) != 2 {
				t.Fatalf("tagged %v, %v; want the sitemap and its page", ids, err)
			}
		})
	})
}

// TestCommonWordsRankWhatTheRareOnesMatchInALargeSQLiteBase: past about
// 10,000 expected matches SQLite matches a question's rare words only,
// and its common words still rank those matches: of two chunks of the
// same length holding the rare word, the one holding the common words
// too comes first, however many chunks hold only the common ones.
// (SQLite only: PostgreSQL bounds its candidates its own way, and
// 24,000 chunks take it a minute.)
func TestCommonWordsRankWhatTheRareOnesMatchInALargeSQLiteBase(t *testing.T) {
	t.Parallel()
	st := storetest.OpenSQLite(t)
	tn := mustTenant(t, st, "kb-large")
	base := mustBase(t, st, tn.ID, "help")
	texts := make([]string, 24_000)
	for i := range texts {
		// Each common word in 11,000 chunks: under half, so it weighs
		// something, and alone over the 10,000 expected matches.
		if i%24 < 11 {
			texts[i] = fmt.Sprintf("Every table column holds a value, as row %d shows.", i)
		} else {
			texts[i] = fmt.Sprintf("Nothing to see in line %d.", i)
		}
	}
	rareOnly := "Splint the pole; the frame keeps every rope taut."
	both := "Splint the pole; the table shows every column value."
	texts[100], texts[7000] = rareOnly, both
	mustIndex(t, st, tn.ID, base.ID, store.KnowledgeSource{}, texts...)
	got := keywordTexts(t, st, tn.ID, base.ID, "splint table column value")
	if len(got) != 2 || got[0] != both || got[1] != rareOnly {
		t.Fatalf("found %q, want the chunk holding the rare word and the common ones, then the one holding the rare word alone", got)
	}
}
