package store

import (
	"time"

	"gorm.io/gorm"
)

// The table shapes of migration step 25 (knowledge bases), frozen like
// step 1.

// v25KnowledgeBase is a tenant's collection of documents a bot answers
// from. Searches read generation; a reindex writes building (0: none) and
// swaps it in when complete, with the embedding model it was written by.
// Revision counts changes to the searchable
// chunk set, so a process that caches vectors knows when to read again.
type v25KnowledgeBase struct {
	ID                string   `gorm:"primaryKey;size:64"`
	TenantID          string   `gorm:"size:64;not null;uniqueIndex:ux_knowledge_bases_slug,priority:1"`
	Tenant            v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Slug              string   `gorm:"size:100;not null;uniqueIndex:ux_knowledge_bases_slug,priority:2"`
	Name              string   `gorm:"size:200;not null"`
	EmbeddingProvider string   `gorm:"size:100;not null;default:''"`
	EmbeddingModel    string   `gorm:"size:200;not null;default:''"`
	EmbeddingDims     int      `gorm:"not null;default:0"`
	Language          string   `gorm:"size:64;not null;default:'simple'"`
	Generation        int64    `gorm:"not null;default:1"`
	Building          int64    `gorm:"not null;default:0"`
	BuildingProvider  string   `gorm:"size:100;not null;default:''"`
	BuildingModel     string   `gorm:"size:200;not null;default:''"`
	BuildingDims      int      `gorm:"not null;default:0"`
	Revision          int64    `gorm:"not null;default:0"`
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

func (v25KnowledgeBase) TableName() string { return "knowledge_bases" }

// v25KnowledgeSource is one document (a file, a page, a sitemap, a text,
// a set of questions and answers) and its place in the indexing queue:
// due at NextAttemptAt (NULL: nothing to do), claimed for a lease like a
// channel job.
type v25KnowledgeSource struct {
	ID             string           `gorm:"primaryKey;size:64"`
	TenantID       string           `gorm:"size:64;not null"`
	Tenant         v1Tenant         `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	BaseID         string           `gorm:"size:64;not null;index:ix_knowledge_sources_base"`
	Base           v25KnowledgeBase `gorm:"foreignKey:BaseID;constraint:OnDelete:CASCADE"`
	Kind           string           `gorm:"size:16;not null"`
	Title          string           `gorm:"type:text;not null;default:''"`
	URL            string           `gorm:"type:text;not null;default:''"`
	Filename       string           `gorm:"type:text;not null;default:''"`
	ContentType    string           `gorm:"size:200;not null;default:''"`
	Bytes          int64            `gorm:"not null;default:0"`
	Tags           string           `gorm:"type:text;not null;default:'[]'"`
	RefreshSeconds int64            `gorm:"not null;default:0"`
	ETag           string           `gorm:"column:etag;size:500;not null;default:''"`
	LastModified   string           `gorm:"size:100;not null;default:''"`
	ContentHash    string           `gorm:"size:100;not null;default:''"`
	Status         string           `gorm:"size:16;not null"`
	Error          string           `gorm:"type:text;not null;default:''"`
	Pages          int              `gorm:"not null;default:0"`
	Chunks         int              `gorm:"not null;default:0"`
	Generation     int64            `gorm:"not null;default:0"`
	Attempts       int              `gorm:"not null;default:0"`
	NextAttemptAt  *time.Time       `gorm:"index:ix_knowledge_sources_due"`
	Claim          string           `gorm:"size:200;not null;default:''"`
	IndexedAt      *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

func (v25KnowledgeSource) TableName() string { return "knowledge_sources" }

// v25KnowledgeSourceTag is one tag of a source, in its own rows so a
// search filters by tag through an index on both databases.
type v25KnowledgeSourceTag struct {
	SourceID string             `gorm:"primaryKey;size:64"`
	Source   v25KnowledgeSource `gorm:"foreignKey:SourceID;constraint:OnDelete:CASCADE"`
	Tag      string             `gorm:"primaryKey;size:100;index:ix_knowledge_source_tags_tag,priority:2"`
	BaseID   string             `gorm:"size:64;not null;index:ix_knowledge_source_tags_tag,priority:1"`
}

func (v25KnowledgeSourceTag) TableName() string { return "knowledge_source_tags" }

// v25KnowledgeLimits are one tenant's own knowledge limits; a nil field
// uses the default.
type v25KnowledgeLimits struct {
	TenantID   string   `gorm:"primaryKey;size:64"`
	Tenant     v1Tenant `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	MaxSources *int64
	MaxBytes   *int64
	MaxChunks  *int64
}

func (v25KnowledgeLimits) TableName() string { return "knowledge_limits" }

// migrateV25 creates the knowledge tables. Chunks have integer ids, the
// rowids of the full-text index: an FTS5 table over them kept by
// triggers on SQLite (its scope column holds one word naming the chunk's
// base and generation, so a search reads only that base's postings
// instead of looking up every match's row), a tsvector column (in the base's language, written
// with the chunk) under a GIN index on PostgreSQL. Embeddings are
// little-endian float32 blobs, the format sqlite-vec reads. Every row
// hangs off its source by a cascading foreign key, so deleting a source
// or a base removes its chunks and vectors.
func migrateV25(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&v25KnowledgeBase{}, &v25KnowledgeSource{}, &v25KnowledgeSourceTag{},
		&v25KnowledgeLimits{}); err != nil {
		return err
	}
	steps := []string{
		"CREATE UNIQUE INDEX ux_knowledge_sources_hash ON knowledge_sources (base_id, content_hash) WHERE content_hash <> ''",
	}
	if tx.Dialector.Name() == "postgres" {
		steps = append(steps,
			`CREATE TABLE knowledge_chunks (
  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  tenant_id VARCHAR(64) NOT NULL,
  base_id VARCHAR(64) NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
  source_id VARCHAR(64) NOT NULL REFERENCES knowledge_sources (id) ON DELETE CASCADE,
  generation BIGINT NOT NULL,
  ordinal INTEGER NOT NULL,
  text TEXT NOT NULL,
  title TEXT NOT NULL DEFAULT '',
  locator TEXT NOT NULL DEFAULT '',
  tokens INTEGER NOT NULL DEFAULT 0,
  hash VARCHAR(100) NOT NULL DEFAULT '',
  tsv TSVECTOR
)`,
			"CREATE INDEX ix_knowledge_chunks_tsv ON knowledge_chunks USING GIN (tsv)",
			`CREATE TABLE knowledge_embeddings (
  chunk_id BIGINT PRIMARY KEY REFERENCES knowledge_chunks (id) ON DELETE CASCADE,
  base_id VARCHAR(64) NOT NULL,
  generation BIGINT NOT NULL,
  embedding BYTEA NOT NULL
)`)
	} else {
		steps = append(steps,
			`CREATE TABLE knowledge_chunks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id TEXT NOT NULL,
  base_id TEXT NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
  source_id TEXT NOT NULL REFERENCES knowledge_sources (id) ON DELETE CASCADE,
  generation INTEGER NOT NULL,
  ordinal INTEGER NOT NULL,
  text TEXT NOT NULL,
  title TEXT NOT NULL DEFAULT '',
  locator TEXT NOT NULL DEFAULT '',
  tokens INTEGER NOT NULL DEFAULT 0,
  hash TEXT NOT NULL DEFAULT '',
  scope TEXT GENERATED ALWAYS AS ('kb' || replace(base_id, '_', '') || 'g' || generation) VIRTUAL
)`,
			`CREATE TABLE knowledge_embeddings (
  chunk_id INTEGER PRIMARY KEY REFERENCES knowledge_chunks (id) ON DELETE CASCADE,
  base_id TEXT NOT NULL,
  generation INTEGER NOT NULL,
  embedding BLOB NOT NULL
)`,
			"CREATE VIRTUAL TABLE knowledge_chunks_search USING fts5(scope, title, text, content='knowledge_chunks', content_rowid='id', tokenize='unicode61 remove_diacritics 2')",
			`CREATE TRIGGER knowledge_chunks_search_insert AFTER INSERT ON knowledge_chunks BEGIN
  INSERT INTO knowledge_chunks_search (rowid, scope, title, text) VALUES (new.id, new.scope, new.title, new.text);
END`,
			`CREATE TRIGGER knowledge_chunks_search_delete AFTER DELETE ON knowledge_chunks BEGIN
  INSERT INTO knowledge_chunks_search (knowledge_chunks_search, rowid, scope, title, text) VALUES ('delete', old.id, old.scope, old.title, old.text);
END`)
	}
	steps = append(steps,
		"CREATE INDEX ix_knowledge_chunks_base ON knowledge_chunks (base_id, generation)",
		"CREATE INDEX ix_knowledge_chunks_source ON knowledge_chunks (source_id, generation, ordinal)",
		"CREATE INDEX ix_knowledge_embeddings_base ON knowledge_embeddings (base_id, generation)")
	for _, q := range steps {
		if err := tx.Exec(q).Error; err != nil {
			return err
		}
	}
	return nil
}
