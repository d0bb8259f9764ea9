package store

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The pgvector path: on PostgreSQL with the vector extension, the
// embeddings table gains a vec column beside the portable blob, and each
// base an HNSW index over it, so a search asks the database for the
// nearest chunks instead of scanning them in the process. Without the
// extension (or on SQLite) the retriever scans cached vectors itself
// (pkg/knowledge/retrieve). This path is not exercised by the tests of
// the project's CI, whose PostgreSQL has no pgvector; it is kept small.

// EnableKnowledgeVectorIndex turns the pgvector path on when the database
// has, or may create, the vector extension, filling the vec column of
// vectors written before. It reports whether the path is on; false, with
// the reason in err when there is one, means searches scan instead.
func (s *Store) EnableKnowledgeVectorIndex(ctx context.Context) (bool, error) {
	if s.dialect != DialectPostgres {
		return false, nil
	}
	if err := s.q(ctx).Exec("CREATE EXTENSION IF NOT EXISTS vector").Error; err != nil {
		return false, fmt.Errorf("store: pgvector unavailable: %w", err)
	}
	if err := s.q(ctx).Exec("ALTER TABLE knowledge_embeddings ADD COLUMN IF NOT EXISTS vec vector").Error; err != nil {
		return false, wrap("add knowledge vector column", err)
	}
	for {
		var rows []knowledgeEmbedding
		if err := s.q(ctx).Raw("SELECT chunk_id, embedding FROM knowledge_embeddings WHERE vec IS NULL LIMIT 500").Scan(&rows).Error; err != nil {
			return false, wrap("fill knowledge vector column", err)
		}
		if len(rows) == 0 {
			return true, nil
		}
		for _, r := range rows {
			if err := s.q(ctx).Exec("UPDATE knowledge_embeddings SET vec = CAST(? AS vector) WHERE chunk_id = ?",
				vectorLiteral(DecodeVector(nil, r.Embedding)), r.ChunkID).Error; err != nil {
				return false, wrap("fill knowledge vector column", err)
			}
		}
	}
}

// hasVectorColumn says whether EnableKnowledgeVectorIndex ran on this
// database, so writes fill the vec column too.
func (k Knowledge) hasVectorColumn(ctx context.Context) (bool, error) {
	if k.s.dialect != DialectPostgres {
		return false, nil
	}
	var n int64
	err := k.q(ctx).Raw(`SELECT COUNT(*) FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = 'knowledge_embeddings' AND column_name = 'vec'`).Scan(&n).Error
	return n > 0, wrap("find knowledge vector column", err)
}

// writeVectorColumn fills the vec column of vecs when the pgvector path
// is on.
func (k Knowledge) writeVectorColumn(ctx context.Context, vecs []knowledgeEmbedding) error {
	on, err := k.hasVectorColumn(ctx)
	if err != nil || !on {
		return err
	}
	for _, v := range vecs {
		if err := k.q(ctx).Exec("UPDATE knowledge_embeddings SET vec = CAST(? AS vector) WHERE chunk_id = ?",
			vectorLiteral(DecodeVector(nil, v.Embedding)), v.ChunkID).Error; err != nil {
			return wrap("write knowledge vector column", err)
		}
	}
	return nil
}

// safeID is what an id must look like to be written into SQL as a
// literal (see EnsureVectorIndex).
var safeID = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)

// EnsureVectorIndex creates the base's HNSW index on the pgvector path.
// The index is partial, one per base, because pgvector indexes vectors of
// one dimension, and a base's is fixed by its model; the base id is a
// literal so the planner can match the partial index.
func (k Knowledge) EnsureVectorIndex(ctx context.Context, b *KnowledgeBase) error {
	if !safeID.MatchString(b.ID) || b.EmbeddingDims <= 0 {
		return fmt.Errorf("store: knowledge vector index: base %q with %d dimensions", b.ID, b.EmbeddingDims)
	}
	q := fmt.Sprintf("CREATE INDEX IF NOT EXISTS ix_knowledge_vec_%s_%d ON knowledge_embeddings USING hnsw ((vec::vector(%d)) vector_cosine_ops) WHERE base_id = '%s'",
		b.ID, b.EmbeddingDims, b.EmbeddingDims, b.ID)
	return wrap("create knowledge vector index", k.q(ctx).Exec(q).Error)
}

// NearestChunks returns the ids of up to limit chunks of the base's
// current generation nearest to vec by cosine distance, through the
// base's HNSW index (pgvector path only), of the sources tags keeps.
func (k Knowledge) NearestChunks(ctx context.Context, b *KnowledgeBase, vec []float32, tags TagFilter, limit int) ([]int64, error) {
	if !safeID.MatchString(b.ID) || len(vec) != b.EmbeddingDims {
		return nil, fmt.Errorf("store: nearest knowledge chunks: base %q, a query of %d dimensions", b.ID, len(vec))
	}
	d := strconv.Itoa(b.EmbeddingDims)
	q := `SELECT e.chunk_id FROM knowledge_embeddings e JOIN knowledge_chunks c ON c.id = e.chunk_id
WHERE e.base_id = '` + b.ID + `' AND c.tenant_id = ? AND e.generation = ?`
	args := []any{k.tenant, b.Generation}
	if tags.On() {
		q += " AND " + tags.condition("c.source_id", "?", "?")
		args = append(args, b.ID)
		if len(tags.Tags) > 0 {
			args = append(args, tags.Tags)
		}
		if len(tags.Tags) > 0 && tags.Untagged {
			args = append(args, b.ID)
		}
	}
	q += " ORDER BY e.vec::vector(" + d + ") <=> CAST(? AS vector(" + d + ")) LIMIT ?"
	var ids []int64
	err := k.q(ctx).Raw(q, append(args, vectorLiteral(vec), limit)...).Scan(&ids).Error
	return ids, wrap("nearest knowledge chunks", err)
}

// vectorLiteral is v in pgvector's text form, [1,2,3].
func vectorLiteral(v []float32) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, f := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(float64(f), 'g', -1, 32))
	}
	b.WriteByte(']')
	return b.String()
}
