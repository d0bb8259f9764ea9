package retrieve

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/parleyhq/parley/pkg/store"
)

// RRFK is the k of reciprocal rank fusion: a result's score is the sum,
// over the searches that found it, of 1/(k + rank). 60 is the value of
// the method's paper, which flattens the head of each list enough that
// agreement between the searches outweighs a single first place.
const RRFK = 60

// DefaultTopK is how many results a query without TopK returns.
const DefaultTopK = 5

// depth is how far down each search's list fusion looks.
const depth = 50

// Mode picks which searches a query runs.
type Mode int

const (
	// Hybrid runs the keyword and the vector search and fuses their
	// ranks: what every caller wants but a measurement.
	Hybrid Mode = iota
	// KeywordOnly runs the keyword search alone.
	KeywordOnly
	// VectorOnly runs the vector search alone.
	VectorOnly
)

// Query is one search of a knowledge base.
type Query struct {
	Text string
	// Vector is Text embedded by the base's model; nil searches by
	// keyword only.
	Vector []float32
	// Mode is Hybrid unless set: the other modes let a benchmark weigh
	// each search on its own.
	Mode Mode
	// TopK bounds the results (DefaultTopK when 0).
	TopK int
	// MinScore drops results scoring less (see Result.Score).
	MinScore float64
	// Tags keeps only chunks of sources carrying at least one of them.
	Tags []string
	// Untagged keeps the chunks of sources without tags too; with no
	// Tags, only those. It restricts a search to what one end user may
	// read (a bot's knowledge.tags_from).
	Untagged bool
}

func (q Query) filter() store.TagFilter { return store.TagFilter{Tags: q.Tags, Untagged: q.Untagged} }

// Result is one chunk found.
type Result struct {
	Source  string `json:"source"`
	Title   string `json:"title"`
	URL     string `json:"url,omitempty"`
	Locator string `json:"locator,omitempty"`
	// Chunk is the chunk's place in its source, from 0.
	Chunk int    `json:"chunk"`
	Text  string `json:"text"`
	// Score is the reciprocal rank fusion score scaled to 0..1: 1 for the
	// first result of both searches, about 0.5 for the first of one search
	// that the other did not find.
	Score float64 `json:"score"`
	// KeywordRank and VectorRank are the chunk's places, from 1, in the
	// keyword and the vector search; 0 where that search did not find it.
	KeywordRank int `json:"keyword_rank"`
	VectorRank  int `json:"vector_rank"`
	// File says the source is an uploaded file: it has no URL, and a
	// citation for a dialog links to it by a signed link instead
	// (docs/knowledge.md).
	File bool `json:"-"`
	// Link is that signed link, made for a bot's search
	// (platform.Knowledge.FileLink).
	Link string `json:"-"`
}

// Searcher searches knowledge bases. It is safe for concurrent use and
// meant to live as long as the process, for its cache of vectors.
type Searcher struct {
	st  *store.Store
	log *slog.Logger
	// indexed is true on the pgvector path: the database finds the
	// nearest chunks itself.
	indexed bool

	mu      sync.Mutex
	sets    map[string]*cachedSet // by base id
	ensured map[string]bool       // bases whose HNSW index exists
}

// cachedSet holds a base's vectors; load is held while they are read, so
// concurrent searches of a stale base read them once.
type cachedSet struct {
	load sync.Mutex
	set  *vectorSet
}

// New returns a Searcher over st. On PostgreSQL it turns on the pgvector
// path when the extension is there (or may be created), and logs which
// path vector searches take.
func New(ctx context.Context, st *store.Store, log *slog.Logger) *Searcher {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Searcher{st: st, log: log, sets: map[string]*cachedSet{}, ensured: map[string]bool{}}
	if st.Dialect() == store.DialectPostgres {
		on, err := st.EnableKnowledgeVectorIndex(ctx)
		if on {
			log.Info("knowledge: vector search through pgvector HNSW indexes")
		} else {
			log.Info("knowledge: vector search scans cached vectors; pgvector is not available", "reason", err)
		}
		s.indexed = on
	}
	return s
}

// Search finds the chunks of the tenant's base (id or slug) that best
// answer q.
func (s *Searcher) Search(ctx context.Context, tenantID, base string, q Query) ([]Result, error) {
	kn := s.st.Tenant(tenantID).Knowledge()
	b, err := kn.Base(ctx, base)
	if err != nil {
		return nil, err
	}
	topK := cmp.Or(q.TopK, DefaultTopK)
	var vector []int64
	var vecErr error
	var wg sync.WaitGroup
	if q.Vector != nil && q.Mode != KeywordOnly {
		// The vector scan is this process's CPU while the keyword search
		// waits on the database: run them side by side.
		wg.Go(func() { vector, vecErr = s.nearest(ctx, kn, b, q, max(depth, topK)) })
	}
	var keyword []int64
	if q.Mode != VectorOnly {
		keyword, err = kn.KeywordSearch(ctx, b, q.Text, q.filter(), max(depth, topK))
	}
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if vecErr != nil {
		return nil, vecErr
	}
	fused := fuse(keyword, vector)
	fused = slices.DeleteFunc(fused, func(f fusedRank) bool { return f.score < q.MinScore })
	fused = fused[:min(topK, len(fused))]
	ids := make([]int64, len(fused))
	for i, f := range fused {
		ids[i] = f.id
	}
	hits, err := kn.Hits(ctx, b.ID, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]store.KnowledgeHit, len(hits))
	for _, h := range hits {
		byID[h.ChunkID] = h
	}
	out := make([]Result, 0, len(fused))
	for _, f := range fused {
		h, ok := byID[f.id]
		if !ok {
			continue // deleted since it was ranked
		}
		out = append(out, Result{Source: h.SourceID, Title: cmp.Or(h.SourceTitle, h.Title), URL: h.URL, Locator: h.Locator,
			Chunk: h.Ordinal, Text: h.Text, Score: f.score, KeywordRank: f.keyword, VectorRank: f.vector, File: h.SourceKind == store.SourceFile})
	}
	return out, nil
}

// nearest returns the ids of up to n chunks nearest to q.Vector.
func (s *Searcher) nearest(ctx context.Context, kn store.Knowledge, b *store.KnowledgeBase, q Query, n int) ([]int64, error) {
	if b.EmbeddingDims == 0 {
		return nil, nil // nothing embedded yet
	}
	if len(q.Vector) != b.EmbeddingDims {
		return nil, fmt.Errorf("retrieve: a query vector of %d dimensions for a base of %d", len(q.Vector), b.EmbeddingDims)
	}
	if s.indexed {
		if err := s.ensureIndex(ctx, kn, b); err != nil {
			return nil, err
		}
		return kn.NearestChunks(ctx, b, q.Vector, q.filter(), n)
	}
	set, err := s.vectors(ctx, kn, b)
	if err != nil {
		return nil, err
	}
	var allowed []bool
	if q.filter().On() {
		tagged, err := kn.FilteredSources(ctx, b.ID, q.filter())
		if err != nil {
			return nil, err
		}
		allowed = make([]bool, len(set.names))
		for i, name := range set.names {
			allowed[i] = slices.Contains(tagged, name)
		}
	}
	found := set.nearest(q.Vector, n, allowed)
	ids := make([]int64, len(found))
	for i, f := range found {
		ids[i] = f.id
	}
	return ids, nil
}

func (s *Searcher) ensureIndex(ctx context.Context, kn store.Knowledge, b *store.KnowledgeBase) error {
	key := fmt.Sprintf("%s/%d", b.ID, b.EmbeddingDims)
	s.mu.Lock()
	done := s.ensured[key]
	s.mu.Unlock()
	if done {
		return nil
	}
	if err := kn.EnsureVectorIndex(ctx, b); err != nil {
		return err
	}
	s.mu.Lock()
	s.ensured[key] = true
	s.mu.Unlock()
	return nil
}

// vectors returns the base's cached vectors, brought up to date when the
// base's generation or revision moved on since they were read: within a
// generation only the sources whose chunks were written since are read
// again. They are stamped with the revision read before them, so a write
// that lands while they are read makes them look stale, never fresh.
func (s *Searcher) vectors(ctx context.Context, kn store.Knowledge, b *store.KnowledgeBase) (*vectorSet, error) {
	s.mu.Lock()
	c := s.sets[b.ID]
	if c == nil {
		c = &cachedSet{}
		s.sets[b.ID] = c
	}
	s.mu.Unlock()
	c.load.Lock()
	defer c.load.Unlock()
	old := c.set
	if old != nil && old.gen == b.Generation && old.rev >= b.Revision {
		return old, nil
	}
	indexed, err := kn.IndexedSources(ctx, b.ID)
	if err != nil {
		return nil, err
	}
	set := &vectorSet{gen: b.Generation, rev: b.Revision, dims: b.EmbeddingDims, indexed: indexed}
	srcIndex := map[string]int32{}
	var changed []string // nil: read every source
	if old != nil && old.gen == set.gen && old.dims == set.dims {
		unchanged := func(src string) bool {
			at, ok := indexed[src]
			was, cached := old.indexed[src]
			return ok && cached && at.Equal(was)
		}
		set.keep(old, unchanged, srcIndex)
		changed = []string{}
		for src := range indexed {
			if !unchanged(src) {
				changed = append(changed, src)
			}
		}
	}
	if changed == nil || len(changed) > 0 {
		err = kn.EachVector(ctx, b.ID, b.Generation, changed, func(id int64, src string, vec []float32) {
			if len(vec) == set.dims {
				set.add(id, src, vec, srcIndex)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	c.set = set
	s.log.Debug("knowledge: vectors cached", "base", b.ID, "generation", b.Generation, "chunks", len(set.ids),
		"read", len(changed), "bytes", set.bytes())
	return set, nil
}

// Forget drops the cached vectors of a base, when it is deleted.
func (s *Searcher) Forget(baseID string) {
	s.mu.Lock()
	delete(s.sets, baseID)
	s.mu.Unlock()
}

// fusedRank is a chunk's place in each search and its fused score.
type fusedRank struct {
	id              int64
	keyword, vector int
	score           float64
}

// fuse merges two ranked lists of chunk ids by reciprocal rank fusion,
// best first; ties go to the better keyword rank, then the lower id, so
// equal inputs always give the same order.
func fuse(keyword, vector []int64) []fusedRank {
	byID := map[int64]*fusedRank{}
	var out []*fusedRank
	at := func(id int64) *fusedRank {
		f := byID[id]
		if f == nil {
			f = &fusedRank{id: id}
			byID[id] = f
			out = append(out, f)
		}
		return f
	}
	for i, id := range keyword {
		if f := at(id); f.keyword == 0 {
			f.keyword = i + 1
		}
	}
	for i, id := range vector {
		if f := at(id); f.vector == 0 {
			f.vector = i + 1
		}
	}
	best := 2.0 / (RRFK + 1)
	res := make([]fusedRank, len(out))
	for i, f := range out {
		if f.keyword > 0 {
			f.score += 1.0 / float64(RRFK+f.keyword)
		}
		if f.vector > 0 {
			f.score += 1.0 / float64(RRFK+f.vector)
		}
		f.score /= best
		res[i] = *f
	}
	slices.SortFunc(res, func(a, b fusedRank) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		if c := cmp.Compare(rankOrLast(a.keyword), rankOrLast(b.keyword)); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	return res
}

func rankOrLast(r int) int {
	if r == 0 {
		return int(^uint(0) >> 1)
	}
	return r
}
