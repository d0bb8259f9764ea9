package retrieve

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	knowledgechunk "github.com/parleyhq/parley/pkg/knowledge/chunk"
	"github.com/parleyhq/parley/pkg/knowledge/extract"
	"github.com/parleyhq/parley/pkg/knowledge/ingest"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/llm/openai"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// The corpus benchmarks measure retrieval over a public corpus: the
// PostgreSQL 15 documentation as Debian's postgresql-doc-15 ships it
// (about 1,170 HTML pages), with the hand-written questions of
// testdata/postgres-doc-questions.json and the pages that answer each.
// `make bench-knowledge` runs them; docs/performance.md has the figures.
//
// corpusEnv names the directory of the pages; without it they skip.
const corpusEnv = "KNOWLEDGE_BENCH_CORPUS"

// questionsFile holds the questions: each with the file names of the
// pages that answer it.
const questionsFile = "testdata/postgres-doc-questions.json"

type page struct {
	name string
	data []byte
}

type question struct {
	Question string   `json:"question"`
	Pages    []string `json:"pages"`
}

// corpus reads the pages and the questions, skipping without a corpus.
func corpus(b *testing.B) ([]page, []question) {
	dir := os.Getenv(corpusEnv)
	if dir == "" {
		b.Skipf("%s is not set: install the corpus (apt-get install postgresql-doc-15) and run make bench-knowledge, "+
			"or set %s=/usr/share/doc/postgresql-doc-15/html", corpusEnv, corpusEnv)
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.html"))
	if err != nil || len(names) == 0 {
		b.Skipf("%s=%s holds no HTML pages (%v): apt-get install postgresql-doc-15", corpusEnv, dir, err)
	}
	slices.Sort(names)
	pages := make([]page, len(names))
	have := map[string]bool{}
	for i, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			b.Fatal(err)
		}
		pages[i] = page{name: filepath.Base(name), data: data}
		have[pages[i].name] = true
	}
	raw, err := os.ReadFile(questionsFile)
	if err != nil {
		b.Fatal(err)
	}
	var questions []question
	if err := json.Unmarshal(raw, &questions); err != nil {
		b.Fatal(err)
	}
	for _, q := range questions {
		for _, p := range q.Pages {
			if !have[p] {
				b.Fatalf("question %q names %s, which the corpus does not hold", q.Question, p)
			}
		}
	}
	return pages, questions
}

// corpusBase makes a tenant with room for the corpus many times over and
// an English base embedding with the fake provider.
func corpusBase(b *testing.B, st *store.Store, slug string) (string, *store.KnowledgeBase) {
	ctx := context.Background()
	tn := &store.Tenant{Slug: slug, Name: slug}
	if err := st.Tenants().Create(ctx, tn); err != nil {
		b.Fatal(err)
	}
	kn := st.Tenant(tn.ID).Knowledge()
	many := int64(1 << 40)
	if err := kn.PutLimits(ctx, store.KnowledgeLimits{MaxSources: &many, MaxBytes: &many, MaxChunks: &many}); err != nil {
		b.Fatal(err)
	}
	base := &store.KnowledgeBase{Slug: "pgdocs", Name: "PostgreSQL documentation", Language: "english",
		EmbeddingProvider: "fake", EmbeddingModel: "embed-small"}
	if err := kn.CreateBase(ctx, base); err != nil {
		b.Fatal(err)
	}
	return tn.ID, base
}

// timedEmbedder adds up the time its embedder takes, so ingestion
// throughput can leave it out.
type timedEmbedder struct {
	llm.Embedder
	took atomic.Int64 // nanoseconds
}

func (e *timedEmbedder) Embed(ctx context.Context, model string, inputs []string) ([][]float32, llm.Usage, error) {
	begin := time.Now()
	defer func() { e.took.Add(int64(time.Since(begin))) }()
	return e.Embedder.Embed(ctx, model, inputs)
}

// BenchmarkKnowledgeQuality indexes the corpus through the ingest worker
// (extract, chunk, embed with the fake model over HTTP, store) and asks
// every question by keyword only, by vector only and hybrid, ten results
// each. It reports recall@5 (the share of questions with a chunk of an
// answering page among the first five) and MRR (the mean of 1/rank of
// the first such chunk within ten, 0 when none), and the worker's
// throughput in chunks per second without the time spent embedding.
func BenchmarkKnowledgeQuality(b *testing.B) {
	pages, questions := corpus(b)
	for _, backend := range storetest.Open(b) {
		b.Run(backend.Name, func(b *testing.B) { benchQuality(b, backend.Store, pages, questions) })
	}
}

var modes = []struct {
	name string
	mode Mode
}{{"keyword", KeywordOnly}, {"vector", VectorOnly}, {"hybrid", Hybrid}}

func benchQuality(b *testing.B, st *store.Store, pages []page, questions []question) {
	tenant, base, pageOf := ingestCorpus(b, st, pages)
	askQuestions(b, st, tenant, base, pageOf, questions)
}

// ingestCorpus indexes the pages through the ingest worker, reporting
// its throughput without the time spent embedding, and returns which
// page each source is.
func ingestCorpus(b *testing.B, st *store.Store, pages []page) (tenant string, base *store.KnowledgeBase, pageOf map[string]string) {
	ctx := context.Background()
	tenant, base = corpusBase(b, st, "quality")
	kn := st.Tenant(tenant).Knowledge()
	srv := llmtest.NewServer(b, llmtest.Options{})
	provider, err := openai.New(openai.Config{Name: "fake", BaseURL: srv.URL(), APIKey: "k", MaxRetries: -1})
	if err != nil {
		b.Fatal(err)
	}
	emb := &timedEmbedder{Embedder: provider}
	w := ingest.New(st, func(name string) (llm.Embedder, bool) { return emb, name == "fake" }, ingest.Options{Concurrency: 16})
	pageOf = map[string]string{}
	for _, p := range pages {
		src := &store.KnowledgeSource{Kind: store.SourceFile, Filename: p.name, Content: p.data,
			ContentHash: fmt.Sprintf("sha256:%x", sha256.Sum256(p.data)), Bytes: int64(len(p.data))}
		if _, err := kn.AddSource(ctx, base.ID, src); err != nil {
			b.Fatal(err)
		}
		pageOf[src.ID] = p.name
	}
	begin := time.Now()
	for {
		n, err := w.RunOnce(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	took := time.Since(begin)
	srcs, err := kn.Sources(ctx, base.ID)
	if err != nil {
		b.Fatal(err)
	}
	chunks := 0
	for _, s := range srcs {
		chunks += s.Chunks
		if s.Status != store.SourceReady {
			b.Logf("%s: %s: %s", pageOf[s.ID], s.Status, s.Error)
		}
	}
	embedding := time.Duration(emb.took.Load())
	b.Logf("%s: indexed %d pages into %d chunks in %v, %v of it embedding", st.Dialect(), len(srcs), chunks,
		took.Round(time.Millisecond), embedding.Round(time.Millisecond))
	// Reported when the benchmark ends: b.Loop drops earlier metrics.
	b.Cleanup(func() {
		b.ReportMetric(float64(chunks), "chunks")
		b.ReportMetric(float64(chunks)/(took-embedding).Seconds(), "ingest-chunks/s")
	})
	settle(b, st)
	return tenant, base, pageOf
}

// settle does what autovacuum does after a bulk load on PostgreSQL:
// without statistics the planner takes the new table for empty, and
// until a vacuum merges the GIN index's list of pending entries every
// keyword search reads it all.
func settle(b *testing.B, st *store.Store) {
	if st.Dialect() != store.DialectPostgres {
		return
	}
	for _, table := range []string{"knowledge_chunks", "knowledge_embeddings", "knowledge_sources"} {
		if err := st.DB().Exec("VACUUM ANALYZE " + table).Error; err != nil {
			b.Fatal(err)
		}
	}
}

// askQuestions asks every question in each mode and reports recall@5
// and MRR.
func askQuestions(b *testing.B, st *store.Store, tenant string, base *store.KnowledgeBase, pageOf map[string]string, questions []question) {
	ctx := context.Background()
	s := New(ctx, st, nil)
	dbPID := oneConnection(b, st)
	vectors := make([][]float32, len(questions))
	for i, q := range questions {
		vectors[i] = llmtest.Embed(q.Question)
	}
	type score struct {
		recall5, mrr float64
		missed       []string
		took, cpu    time.Duration
	}
	var scores [3]score
	for b.Loop() {
		for m, mode := range modes {
			sc := score{}
			cpuBefore := cpuTime() + backendTime(dbPID)
			for i, q := range questions {
				begin := time.Now()
				res, err := s.Search(ctx, tenant, base.ID, Query{Text: q.Question, Vector: vectors[i], TopK: 10, Mode: mode.mode})
				sc.took += time.Since(begin)
				if err != nil {
					b.Fatal(err)
				}
				rank := slices.IndexFunc(res, func(r Result) bool { return slices.Contains(q.Pages, pageOf[r.Source]) }) + 1
				if rank > 0 {
					sc.mrr += 1 / float64(rank)
				}
				if rank > 0 && rank <= 5 {
					sc.recall5++
				} else {
					sc.missed = append(sc.missed, q.Question)
				}
			}
			sc.cpu = cpuTime() + backendTime(dbPID) - cpuBefore
			sc.recall5 /= float64(len(questions))
			sc.mrr /= float64(len(questions))
			scores[m] = sc
		}
	}
	for m, mode := range modes {
		sc := scores[m]
		b.ReportMetric(sc.recall5, mode.name+"-recall@5")
		b.ReportMetric(sc.mrr, mode.name+"-MRR")
		perQuery := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(len(questions)) }
		b.Logf("%s %-7s recall@5 %.3f  MRR %.3f  mean query %.2f ms, %.2f CPU ms  missed: %s", st.Dialect(), mode.name, sc.recall5, sc.mrr,
			perQuery(sc.took), perQuery(sc.cpu), strings.Join(sc.missed, " | "))
	}
}

// BenchmarkKnowledgeLatency measures hybrid queries (the questions,
// five results) over a base of 10,000 and 100,000 chunks: the corpus's
// chunks, repeated as often as it takes. The chunks are extracted, cut
// and embedded once; storing them is timed alone, as ingestion
// throughput without embedding. It reports p50 and p99 of the queries.
// KNOWLEDGE_BENCH_SIZES=10000 limits the sizes.
func BenchmarkKnowledgeLatency(b *testing.B) {
	pages, questions := corpus(b)
	docs := corpusChunks(b, pages)
	sizes := []int{10_000, 100_000}
	if os.Getenv("KNOWLEDGE_BENCH_SIZES") == "10000" {
		sizes = sizes[:1]
	}
	for _, backend := range storetest.Open(b) {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/%dk", backend.Name, n/1000), func(b *testing.B) {
				benchLatency(b, backend.Store, docs, questions, n)
			})
		}
	}
}

// corpusChunks extracts, cuts and embeds every page as the worker does,
// one slice of chunks per page.
func corpusChunks(b *testing.B, pages []page) [][]store.KnowledgeChunk {
	var docs [][]store.KnowledgeChunk
	for _, p := range pages {
		doc, err := extract.Extract(p.data, p.name, "", extract.Limits{})
		if err != nil {
			continue // the worker fails such a page too
		}
		var cs []store.KnowledgeChunk
		for i, c := range knowledgechunk.Split(doc, knowledgechunk.Options{}) {
			cs = append(cs, store.KnowledgeChunk{Ordinal: i, Text: c.Text, Title: c.Title, Locator: c.Locator,
				Tokens: c.Tokens, Hash: c.Hash, Embedding: llmtest.Embed(c.Text)})
		}
		if len(cs) > 0 {
			docs = append(docs, cs)
		}
	}
	return docs
}

func benchLatency(b *testing.B, st *store.Store, docs [][]store.KnowledgeChunk, questions []question, n int) {
	ctx := context.Background()
	tenant, base := corpusBase(b, st, fmt.Sprintf("latency-%d", n))
	kn := st.Tenant(tenant).Knowledge()
	jobs := st.KnowledgeJobs()
	var storing time.Duration
	stored := 0
	for i := 0; stored < n; i++ {
		chunks := docs[i%len(docs)]
		chunks = chunks[:min(len(chunks), n-stored)]
		src := &store.KnowledgeSource{Kind: store.SourceText, Title: fmt.Sprint("page ", i), ContentHash: fmt.Sprint(i)}
		if _, err := kn.AddSource(ctx, base.ID, src); err != nil {
			b.Fatal(err)
		}
		begin := time.Now()
		claimed, err := jobs.Claim(ctx, "bench/w", time.Hour, 1, nil)
		if err != nil || len(claimed) != 1 {
			b.Fatal(len(claimed), err)
		}
		if err := jobs.Done(ctx, &claimed[0], store.KnowledgeIndexed{ContentHash: src.ContentHash, Chunks: chunks}); err != nil {
			b.Fatal(err)
		}
		storing += time.Since(begin)
		stored += len(chunks)
	}
	b.Logf("%s: stored %d chunks in %v", st.Dialect(), stored, storing.Round(time.Millisecond))
	settle(b, st)
	s := New(ctx, st, nil)
	queries := make([]Query, len(questions))
	for i, q := range questions {
		queries[i] = Query{Text: q.Question, Vector: llmtest.Embed(q.Question), TopK: 5}
		// The first search reads the base's vectors into the cache.
		if _, err := s.Search(ctx, tenant, base.ID, queries[i]); err != nil {
			b.Fatal(err)
		}
	}
	dbPID := oneConnection(b, st)
	var took []time.Duration
	i := 0
	// On a machine others share, wall time includes waiting for a core:
	// the CPU time per query is reported beside it.
	defer cpuPerOp(b, dbPID)()
	for b.Loop() {
		begin := time.Now()
		if _, err := s.Search(ctx, tenant, base.ID, queries[i%len(queries)]); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(begin))
		i++
	}
	slices.Sort(took)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
	b.ReportMetric(ms(took[len(took)*99/100]), "p99-ms")
	b.ReportMetric(float64(stored)/storing.Seconds(), "store-chunks/s")
}

// oneConnection limits a PostgreSQL store to one connection, so its
// backend does all of the work measured, and returns the backend's
// process id (0 on SQLite).
func oneConnection(b *testing.B, st *store.Store) int {
	if st.Dialect() != store.DialectPostgres {
		return 0
	}
	sqlDB, err := st.DB().DB()
	if err != nil {
		b.Fatal(err)
	}
	sqlDB.SetMaxOpenConns(1)
	pid := 0
	if err := st.DB().Raw("SELECT pg_backend_pid()").Scan(&pid).Error; err != nil {
		b.Fatal(err)
	}
	return pid
}
