package retrieve

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"

	// sqlite-vec, for the comparison with its scans (see benchVec).
	_ "modernc.org/sqlite/vec"
)

const benchDims = 256

// BenchmarkKnowledgeSearch measures a hybrid query (keyword and vector
// search, fused, the top 5 read back) over one base of 10,000 and
// 100,000 chunks of 256 dimensions, on SQLite and, with
// PARLEY_TEST_DATABASE_URL, PostgreSQL; and, to choose how SQLite finds
// the nearest vectors, sqlite-vec's two ways beside the cached scan.
// KNOWLEDGE_BENCH_SIZES=10000 limits the sizes.
func BenchmarkKnowledgeSearch(b *testing.B) {
	sizes := []int{10_000, 100_000}
	if os.Getenv("KNOWLEDGE_BENCH_SIZES") == "10000" {
		sizes = sizes[:1]
	}
	for _, backend := range storetest.Open(b) {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/%dk", backend.Name, n/1000), func(b *testing.B) {
				benchSearch(b, backend.Store, n)
			})
		}
	}
}

func benchSearch(b *testing.B, st *store.Store, n int) {
	ctx := context.Background()
	tenantID, base, queries := benchBase(b, st, n)
	dbPID := 0
	if st.Dialect() == store.DialectPostgres {
		// One connection, so its backend does all of the work measured.
		sqlDB, err := st.DB().DB()
		if err != nil {
			b.Fatal(err)
		}
		sqlDB.SetMaxOpenConns(1)
		if err := st.DB().Raw("SELECT pg_backend_pid()").Scan(&dbPID).Error; err != nil {
			b.Fatal(err)
		}
	}
	kn := st.Tenant(tenantID).Knowledge()
	tn := struct{ ID string }{tenantID}
	s := New(ctx, st, nil)
	if _, err := s.Search(ctx, tn.ID, base.ID, queries[0]); err != nil {
		b.Fatal(err)
	}
	c := s.sets[base.ID]
	var took []time.Duration
	p50 := func(b *testing.B) func() {
		took = took[:0]
		return func() {
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
		}
	}
	b.Logf("%s: cached %d vectors in %d bytes", st.Dialect(), len(c.set.ids), c.set.bytes())
	b.Run("hybrid", func(b *testing.B) {
		defer cpuPerOp(b, dbPID)()
		defer p50(b)()
		i := 0
		for b.Loop() {
			begin := time.Now()
			if _, err := s.Search(ctx, tn.ID, base.ID, queries[i%len(queries)]); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(begin))
			i++
		}
	})
	b.Run("hybrid with a tag", func(b *testing.B) {
		defer cpuPerOp(b, dbPID)()
		i := 0
		for b.Loop() {
			q := queries[i%len(queries)]
			q.Tags = []string{"t1"}
			if _, err := s.Search(ctx, tn.ID, base.ID, q); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("keyword", func(b *testing.B) {
		defer cpuPerOp(b, dbPID)()
		i := 0
		for b.Loop() {
			if _, err := kn.KeywordSearch(ctx, base, queries[i%len(queries)].Text, store.TagFilter{}, depth); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("vector, cached scan", func(b *testing.B) {
		defer cpuPerOp(b, dbPID)()
		i := 0
		for b.Loop() {
			c.set.nearest(queries[i%len(queries)].Vector, depth, nil)
			i++
		}
	})
	b.Run("vector, cache read from the database", func(b *testing.B) {
		defer cpuPerOp(b, dbPID)()
		for b.Loop() {
			s.Forget(base.ID)
			if _, err := s.vectors(ctx, kn, base); err != nil {
				b.Fatal(err)
			}
		}
	})
	if st.Dialect() == store.DialectSQLite {
		benchVec(b, st, base, queries)
	}
}

// benchBase fills a base of n chunks of random text (a Zipf-distributed
// vocabulary, 80 words a chunk) with random unit vectors, and makes
// queries of three mid-frequency words.
func benchBase(b testing.TB, st *store.Store, n int) (tenantID string, base *store.KnowledgeBase, queries []Query) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	words := benchVocabulary(rng, 5000)
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(words)-1))
	tn := &store.Tenant{Slug: fmt.Sprintf("bench-%d", n), Name: "bench"}
	if err := st.Tenants().Create(ctx, tn); err != nil {
		b.Fatal(err)
	}
	kn := st.Tenant(tn.ID).Knowledge()
	many := int64(1_000_000)
	if err := kn.PutLimits(ctx, store.KnowledgeLimits{MaxChunks: &many}); err != nil {
		b.Fatal(err)
	}
	base = &store.KnowledgeBase{Slug: "bench", Name: "bench", Language: "english"}
	if err := kn.CreateBase(ctx, base); err != nil {
		b.Fatal(err)
	}
	begin := time.Now()
	const perSource = 200
	for i := 0; i < n; i += perSource {
		src := &store.KnowledgeSource{Kind: store.SourceText, ContentHash: fmt.Sprint(i), Tags: []string{fmt.Sprint("t", i%3)}}
		if _, err := kn.AddSource(ctx, base.ID, src); err != nil {
			b.Fatal(err)
		}
		claimed, err := st.KnowledgeJobs().Claim(ctx, "bench/w", time.Hour, 1, nil)
		if err != nil || len(claimed) != 1 {
			b.Fatal(len(claimed), err)
		}
		chunks := make([]store.KnowledgeChunk, perSource)
		for j := range chunks {
			var text strings.Builder
			for range 80 {
				text.WriteString(words[zipf.Uint64()])
				text.WriteByte(' ')
			}
			chunks[j] = store.KnowledgeChunk{Ordinal: j, Text: text.String(), Embedding: benchVector(rng)}
		}
		if err := st.KnowledgeJobs().Done(ctx, &claimed[0], store.KnowledgeIndexed{Chunks: chunks}); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%s: indexed %d chunks in %v", st.Dialect(), n, time.Since(begin).Round(time.Millisecond))
	if st.Dialect() == store.DialectPostgres {
		// As autovacuum does after a bulk load: without statistics the
		// planner takes the new table for empty and filters every chunk
		// of the base instead of asking the GIN index.
		if err := st.DB().Exec("ANALYZE knowledge_chunks").Error; err != nil {
			b.Fatal(err)
		}
	}
	queries = make([]Query, 64)
	for i := range queries {
		// Mid-frequency words, as a question's content words are.
		q := []string{words[10+rng.IntN(500)], words[10+rng.IntN(500)], words[100+rng.IntN(2000)]}
		queries[i] = Query{Text: strings.Join(q, " "), Vector: benchVector(rng), TopK: 5}
	}
	base, err := kn.Base(ctx, base.ID)
	if err != nil {
		b.Fatal(err)
	}
	return tn.ID, base, queries
}

// benchVec measures sqlite-vec: vec_distance_cosine over the stored
// blobs, and a vec0 table's KNN query over a copy of them.
func benchVec(b *testing.B, st *store.Store, base *store.KnowledgeBase, queries []Query) {
	db := st.DB()
	dbPID := 0
	b.Run("vector, sqlite-vec vec_distance_cosine", func(b *testing.B) {
		defer cpuPerOp(b, dbPID)()
		i := 0
		for b.Loop() {
			var ids []int64
			err := db.Raw(`SELECT chunk_id FROM knowledge_embeddings WHERE base_id = ? AND generation = ?
ORDER BY vec_distance_cosine(embedding, ?) LIMIT ?`, base.ID, base.Generation, store.EncodeVector(queries[i%len(queries)].Vector), depth).Scan(&ids).Error
			if err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	stmts := []string{
		"DROP TABLE IF EXISTS bench_vec",
		fmt.Sprintf("CREATE VIRTUAL TABLE bench_vec USING vec0(embedding float[%d] distance_metric=cosine)", benchDims),
		"INSERT INTO bench_vec (rowid, embedding) SELECT chunk_id, embedding FROM knowledge_embeddings WHERE base_id = '" + base.ID + "'",
	}
	for _, q := range stmts {
		if err := db.Exec(q).Error; err != nil {
			b.Fatal(err)
		}
	}
	b.Run("vector, sqlite-vec vec0 knn", func(b *testing.B) {
		defer cpuPerOp(b, dbPID)()
		i := 0
		for b.Loop() {
			var ids []int64
			err := db.Raw("SELECT rowid FROM bench_vec WHERE embedding MATCH ? AND k = ?",
				store.EncodeVector(queries[i%len(queries)].Vector), depth).Scan(&ids).Error
			if err != nil || len(ids) != depth {
				b.Fatal(len(ids), err)
			}
			i++
		}
	})
}

// cpuPerOp reports the CPU time this process spent per operation, user
// and system, beside the wall time: on a machine others share, wall time
// includes waiting for a core. With dbPID, the PostgreSQL backend's CPU
// time too (from /proc, in clock ticks of 10 ms: read it over many ops).
func cpuPerOp(b *testing.B, dbPID int) func() {
	before, dbBefore := cpuTime(), backendTime(dbPID)
	return func() {
		b.ReportMetric(float64((cpuTime()-before).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		if dbPID != 0 {
			b.ReportMetric(float64((backendTime(dbPID)-dbBefore).Microseconds())/1000/float64(b.N), "db-cpu-ms/op")
		}
	}
}

// backendTime is the CPU time of process pid (utime and stime of
// /proc/pid/stat), 0 when unreadable.
func backendTime(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command, which is in parentheses and may hold spaces.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchVocabulary(rng *rand.Rand, n int) []string {
	words := make([]string, n)
	for i := range words {
		var w strings.Builder
		for range 3 + rng.IntN(6) {
			w.WriteByte(byte('a' + rng.IntN(26)))
		}
		words[i] = w.String()
	}
	return words
}

// benchVector is a random unit vector, as the embeddings client returns.
func benchVector(rng *rand.Rand) []float32 {
	v := make([]float32, benchDims)
	var norm float64
	for i := range v {
		f := rng.NormFloat64()
		v[i] = float32(f)
		norm += f * f
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(norm))
	}
	return v
}
