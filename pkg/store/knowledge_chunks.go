package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
)

// KnowledgeChunk is one searchable piece of a source in one index
// generation, with its vector.
type KnowledgeChunk struct {
	ID         int64 `gorm:"primaryKey"`
	TenantID   string
	BaseID     string
	SourceID   string
	Generation int64
	// Ordinal is the chunk's place in its source, from 0.
	Ordinal int
	Text    string
	Title   string
	// Locator says where in the source the chunk is: a page, a heading
	// path, a URL anchor.
	Locator string
	Tokens  int
	Hash    string
	// Embedding is the chunk's vector, nil for none (keyword search only).
	Embedding []float32 `gorm:"-"`
}

func (KnowledgeChunk) TableName() string { return "knowledge_chunks" }

// knowledgeEmbedding is one chunk's vector row.
type knowledgeEmbedding struct {
	ChunkID    int64 `gorm:"primaryKey"`
	BaseID     string
	Generation int64
	Embedding  []byte
}

func (knowledgeEmbedding) TableName() string { return "knowledge_embeddings" }

// EncodeVector is v as little-endian float32s, the blob format of the
// embeddings table and of sqlite-vec.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// DecodeVector reads a blob EncodeVector wrote into dst (grown as needed).
func DecodeVector(dst []float32, b []byte) []float32 {
	n := len(b) / 4
	dst = dst[:0]
	for i := range n {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return dst
}

// Chunks lists a source's chunks in the base's current generation, in
// order, without vectors.
func (k Knowledge) Chunks(ctx context.Context, baseID, sourceID string) ([]KnowledgeChunk, error) {
	b, err := k.Base(ctx, baseID)
	if err != nil {
		return nil, err
	}
	var out []KnowledgeChunk
	err = k.q(ctx).Select("id, tenant_id, base_id, source_id, generation, ordinal, text, title, locator, tokens, hash").
		Where("tenant_id = ? AND base_id = ? AND source_id = ? AND generation = ?", k.tenant, b.ID, sourceID, b.Generation).
		Order("ordinal").Find(&out).Error
	return out, wrap("list knowledge chunks", err)
}

// writeChunks replaces src's chunks in generation gen by chunks, vectors
// included, checking the tenant's chunk limit. It runs inside the
// transaction of the job that indexed src.
func (k Knowledge) writeChunks(ctx context.Context, b *KnowledgeBase, src *KnowledgeSource, gen int64, chunks []KnowledgeChunk) error {
	if err := k.q(ctx).Exec("DELETE FROM knowledge_chunks WHERE tenant_id = ? AND source_id = ? AND generation = ?",
		k.tenant, src.ID, gen).Error; err != nil {
		return wrap("delete knowledge chunks", err)
	}
	if len(chunks) == 0 {
		return nil
	}
	lim, err := k.Limits(ctx)
	if err != nil {
		return err
	}
	use, err := k.Usage(ctx)
	if err != nil {
		return err
	}
	if use.Chunks-int64(src.Chunks)+int64(len(chunks)) > *lim.MaxChunks {
		return fmt.Errorf("store: index knowledge source: %d chunks: %w", *lim.MaxChunks, ErrKnowledgeLimit)
	}
	dims, dimsColumn := b.EmbeddingDims, "embedding_dims"
	if gen == b.Building {
		dims, dimsColumn = b.BuildingDims, "building_dims"
	}
	known := dims
	for i := range chunks {
		c := &chunks[i]
		if c.Embedding == nil {
			continue
		}
		if dims == 0 {
			dims = len(c.Embedding)
		}
		if len(c.Embedding) != dims || dims == 0 {
			return fmt.Errorf("store: index knowledge source: chunk %d has %d dimensions, the base's vectors %d: %w", i, len(c.Embedding), dims, ErrKnowledgeDimensions)
		}
	}
	if dims != known {
		if err := k.q(ctx).Exec("UPDATE knowledge_bases SET "+dimsColumn+" = ? WHERE tenant_id = ? AND id = ?", dims, k.tenant, b.ID).Error; err != nil {
			return wrap("set knowledge dimensions", err)
		}
		if gen == b.Building {
			b.BuildingDims = dims
		} else {
			b.EmbeddingDims = dims
		}
	}
	for i := range chunks {
		c := &chunks[i]
		c.ID, c.TenantID, c.BaseID, c.SourceID, c.Generation = 0, k.tenant, b.ID, src.ID, gen
	}
	if err := k.q(ctx).CreateInBatches(chunks, 200).Error; err != nil {
		return wrap("write knowledge chunks", err)
	}
	if k.s.dialect == DialectPostgres {
		err := k.q(ctx).Exec(`UPDATE knowledge_chunks SET tsv = to_tsvector(CAST(? AS regconfig), title || ' ' || text)
WHERE tenant_id = ? AND source_id = ? AND generation = ?`, b.Language, k.tenant, src.ID, gen).Error
		if err != nil {
			return wrap("index knowledge chunks", err)
		}
	}
	var vecs []knowledgeEmbedding
	for _, c := range chunks {
		if c.Embedding != nil {
			vecs = append(vecs, knowledgeEmbedding{ChunkID: c.ID, BaseID: b.ID, Generation: gen, Embedding: EncodeVector(c.Embedding)})
		}
	}
	if len(vecs) > 0 {
		if err := k.q(ctx).CreateInBatches(vecs, 200).Error; err != nil {
			return wrap("write knowledge vectors", err)
		}
		if err := k.writeVectorColumn(ctx, vecs); err != nil {
			return err
		}
	}
	return nil
}

// Reindex starts a new index generation of the base, embedded by
// provider and model (empty: the base's own): every source is queued to
// be indexed into it while searches keep reading the current one, and
// the new generation replaces it, model included, when the last source
// is done (sources that fail are not waited for, and lose their chunks
// at the swap). A reindex under way is started over. It returns the new
// generation.
func (k Knowledge) Reindex(ctx context.Context, baseID, provider, model string) (int64, error) {
	var gen int64
	err := k.tx(ctx, func(tx Knowledge) error {
		b, err := tx.lockBase(ctx, baseID)
		if err != nil {
			return err
		}
		gen = max(b.Generation, b.Building) + 1
		if err := tx.q(ctx).Exec("DELETE FROM knowledge_chunks WHERE tenant_id = ? AND base_id = ? AND generation > ?",
			k.tenant, b.ID, b.Generation).Error; err != nil {
			return wrap("reindex knowledge base", err)
		}
		now := k.s.db.NowFunc()
		dims := 0
		if provider == "" && model == "" || provider == b.EmbeddingProvider && model == b.EmbeddingModel {
			provider, model, dims = b.EmbeddingProvider, b.EmbeddingModel, b.EmbeddingDims
		}
		if err := tx.q(ctx).Exec(`UPDATE knowledge_bases SET building = ?, building_provider = ?, building_model = ?, building_dims = ?, updated_at = ?
WHERE tenant_id = ? AND id = ?`, gen, provider, model, dims, now, k.tenant, b.ID).Error; err != nil {
			return wrap("reindex knowledge base", err)
		}
		b.BuildingProvider, b.BuildingModel, b.BuildingDims = provider, model, dims
		if err := tx.q(ctx).Exec(`UPDATE knowledge_sources SET status = ?, error = '', attempts = 0, next_attempt_at = ?, updated_at = ?
WHERE tenant_id = ? AND base_id = ?`, SourceQueued, now, now, k.tenant, b.ID).Error; err != nil {
			return wrap("reindex knowledge base", err)
		}
		b.Building = gen
		return tx.swapIfBuilt(ctx, b)
	})
	return gen, err
}

// lockBase reads the base for an update: on PostgreSQL the row stays
// locked to the transaction, so a swap and a reindex never interleave;
// SQLite's write lock, taken at BEGIN, does that already.
func (k Knowledge) lockBase(ctx context.Context, baseID string) (*KnowledgeBase, error) {
	q := "SELECT * FROM knowledge_bases WHERE tenant_id = ? AND id = ?"
	if k.s.dialect == DialectPostgres {
		q += " FOR UPDATE"
	}
	var out []KnowledgeBase
	if err := k.q(ctx).Raw(q, k.tenant, baseID).Scan(&out).Error; err != nil {
		return nil, wrap("lock knowledge base", err)
	}
	if len(out) == 0 {
		return nil, wrap("lock knowledge base", ErrNotFound)
	}
	return &out[0], nil
}

// swapIfBuilt makes the building generation current once no source is
// waiting to be indexed into it, then deletes the older generations.
func (k Knowledge) swapIfBuilt(ctx context.Context, b *KnowledgeBase) error {
	if b.Building == 0 {
		return nil
	}
	var waiting int64
	err := k.q(ctx).Model(&KnowledgeSource{}).Where("tenant_id = ? AND base_id = ? AND generation < ? AND status <> ?",
		k.tenant, b.ID, b.Building, SourceFailed).Count(&waiting).Error
	if err != nil || waiting > 0 {
		return wrap("swap knowledge generation", err)
	}
	err = k.q(ctx).Exec(`UPDATE knowledge_bases SET generation = building, building = 0, revision = revision + 1,
  embedding_provider = building_provider, embedding_model = building_model, embedding_dims = building_dims,
  building_provider = '', building_model = '', building_dims = 0, updated_at = ?
WHERE tenant_id = ? AND id = ?`, k.s.db.NowFunc(), k.tenant, b.ID).Error
	if err != nil {
		return wrap("swap knowledge generation", err)
	}
	err = k.q(ctx).Exec("DELETE FROM knowledge_chunks WHERE tenant_id = ? AND base_id = ? AND generation < ?",
		k.tenant, b.ID, b.Building).Error
	if err != nil {
		return wrap("drop old knowledge generation", err)
	}
	err = k.q(ctx).Exec("UPDATE knowledge_sources SET chunks = 0 WHERE tenant_id = ? AND base_id = ? AND generation < ?",
		k.tenant, b.ID, b.Building).Error
	if err != nil {
		return wrap("drop old knowledge generation", err)
	}
	b.Generation, b.Building = b.Building, 0
	b.EmbeddingProvider, b.EmbeddingModel, b.EmbeddingDims = b.BuildingProvider, b.BuildingModel, b.BuildingDims
	b.BuildingProvider, b.BuildingModel, b.BuildingDims = "", "", 0
	return nil
}
