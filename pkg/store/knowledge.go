package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ID prefixes of knowledge rows.
const (
	PrefixKnowledgeBase   = "kb"
	PrefixKnowledgeSource = "src"
)

// ErrKnowledgeLimit means a write would take the tenant past one of its
// knowledge limits (sources, bytes or chunks).
var ErrKnowledgeLimit = errors.New("knowledge limit reached")

// ErrKnowledgeDimensions means a chunk's vector is not as long as the
// base's other vectors: the embedding model answered another size.
var ErrKnowledgeDimensions = errors.New("embedding dimensions differ")

// KnowledgeBase is a tenant's collection of documents a bot answers from.
// Searches read Generation; a reindex writes Building (0: none) and swaps
// it in when every source is indexed into it. Revision changes whenever
// the searchable chunk set does, so cached vectors know they are stale.
type KnowledgeBase struct {
	ID                string `gorm:"primaryKey"`
	TenantID          string
	Slug              string
	Name              string
	EmbeddingProvider string
	EmbeddingModel    string
	// EmbeddingDims is the length of every vector of the base; 0 until the
	// first vectors are written, which then fix it.
	EmbeddingDims int
	// Language is the PostgreSQL text search configuration of the base's
	// keyword index ("simple", "english", "german", ...). SQLite's index
	// is the same for every language: words split on Unicode boundaries,
	// case and diacritics folded, no stemming.
	Language   string
	Generation int64
	Building   int64
	// BuildingProvider, BuildingModel and BuildingDims are the embedding
	// model of the building generation: a worker indexing a source while
	// Building is set embeds with them; the swap makes them the base's.
	BuildingProvider string
	BuildingModel    string
	BuildingDims     int
	Revision         int64
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

func (KnowledgeBase) TableName() string { return "knowledge_bases" }

// KnowledgeLimits bound what one tenant keeps in its knowledge bases,
// across all of them. A nil field uses the default: 1,000 sources,
// 500 MB of documents and fetched pages, 200,000 chunks (about 100
// million tokens of text, and 100 MB of 256-dimension vectors), and
// 1,000 pages read from one sitemap (each page is a source, so the
// sources limit bounds sitemaps too).
type KnowledgeLimits struct {
	TenantID        string `gorm:"primaryKey"`
	MaxSources      *int64
	MaxBytes        *int64
	MaxChunks       *int64
	MaxSitemapPages *int64
}

func (KnowledgeLimits) TableName() string { return "knowledge_limits" }

// Default knowledge limits per tenant; see KnowledgeLimits.
const (
	DefaultKnowledgeSources = 1_000
	DefaultKnowledgeBytes   = 500 << 20
	DefaultKnowledgeChunks  = 200_000
	DefaultSitemapPages     = 1_000
)

// Knowledge is one tenant's knowledge bases, sources and chunks. Every
// method reads and writes only that tenant's rows: another tenant's base
// is ErrNotFound.
type Knowledge struct{ scope }

// Knowledge returns the tenant's knowledge bases.
func (t TenantScope) Knowledge() Knowledge {
	return Knowledge(t)
}

// tx runs fn in one transaction with the tenant's Knowledge over it.
func (k Knowledge) tx(ctx context.Context, fn func(tx Knowledge) error) error {
	return k.s.Tx(ctx, func(tx *Store) error { return fn(tx.Tenant(k.tenant).Knowledge()) })
}

func (k Knowledge) q(ctx context.Context) *gorm.DB { return k.s.q(ctx) }

// slugPattern is what a knowledge base slug may be: it appears in URLs
// and in the tenant's git tree.
var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,99}$`)

// CreateBase stores a new knowledge base (ID, timestamps and generation
// are set here; Language defaults to "simple"). A slug taken in the
// tenant is ErrConflict.
func (k Knowledge) CreateBase(ctx context.Context, b *KnowledgeBase) error {
	if !slugPattern.MatchString(b.Slug) {
		return fmt.Errorf("store: create knowledge base: slug %q: lowercase letters, digits and dashes", b.Slug)
	}
	if b.Language == "" {
		b.Language = "simple"
	}
	if err := k.checkLanguage(ctx, b.Language); err != nil {
		return err
	}
	b.ID, b.TenantID = NewID(PrefixKnowledgeBase), k.tenant
	b.Generation, b.Building, b.Revision = 1, 0, 0
	now := k.s.db.NowFunc()
	b.CreatedAt, b.UpdatedAt = now, now
	return wrap("create knowledge base", k.q(ctx).Create(b).Error)
}

// checkLanguage refuses a language PostgreSQL has no text search
// configuration for; SQLite takes any.
func (k Knowledge) checkLanguage(ctx context.Context, lang string) error {
	if k.s.dialect != DialectPostgres {
		return nil
	}
	var n int64
	err := k.q(ctx).Raw("SELECT COUNT(*) FROM pg_ts_config WHERE cfgname = ?", lang).Scan(&n).Error
	if err != nil {
		return wrap("check knowledge language", err)
	}
	if n == 0 {
		return fmt.Errorf("store: knowledge base language %q: no such text search configuration", lang)
	}
	return nil
}

// Base returns the tenant's base by id or slug.
func (k Knowledge) Base(ctx context.Context, idOrSlug string) (*KnowledgeBase, error) {
	var b KnowledgeBase
	err := k.q(ctx).Where("tenant_id = ? AND (id = ? OR slug = ?)", k.tenant, idOrSlug, idOrSlug).First(&b).Error
	return &b, wrap("get knowledge base", err)
}

// Bases lists the tenant's bases by slug.
func (k Knowledge) Bases(ctx context.Context) ([]KnowledgeBase, error) {
	var out []KnowledgeBase
	err := k.q(ctx).Where("tenant_id = ?", k.tenant).Order("slug").Find(&out).Error
	return out, wrap("list knowledge bases", err)
}

// RenameBase changes a base's name.
func (k Knowledge) RenameBase(ctx context.Context, baseID, name string) error {
	res := k.q(ctx).Model(&KnowledgeBase{}).Where("tenant_id = ? AND id = ?", k.tenant, baseID).
		Updates(map[string]any{"name": name, "updated_at": k.s.db.NowFunc()})
	return rowsOrNotFound("rename knowledge base", res)
}

// DeleteBase deletes a base with its sources, chunks and vectors.
func (k Knowledge) DeleteBase(ctx context.Context, baseID string) error {
	res := k.q(ctx).Where("tenant_id = ? AND id = ?", k.tenant, baseID).Delete(&KnowledgeBase{})
	return rowsOrNotFound("delete knowledge base", res)
}

func rowsOrNotFound(op string, res *gorm.DB) error {
	if res.Error != nil {
		return wrap(op, res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap(op, ErrNotFound)
	}
	return nil
}

// Limits returns the tenant's knowledge limits with the defaults filled
// in.
func (k Knowledge) Limits(ctx context.Context) (KnowledgeLimits, error) {
	var found []KnowledgeLimits
	if err := k.q(ctx).Where("tenant_id = ?", k.tenant).Limit(1).Find(&found).Error; err != nil {
		return KnowledgeLimits{}, wrap("get knowledge limits", err)
	}
	l := KnowledgeLimits{TenantID: k.tenant}
	if len(found) > 0 {
		l = found[0]
	}
	fill := func(p **int64, def int64) {
		if *p == nil {
			*p = &def
		}
	}
	fill(&l.MaxSources, DefaultKnowledgeSources)
	fill(&l.MaxBytes, DefaultKnowledgeBytes)
	fill(&l.MaxChunks, DefaultKnowledgeChunks)
	fill(&l.MaxSitemapPages, DefaultSitemapPages)
	return l, nil
}

// PutLimits replaces the tenant's own knowledge limits; nil fields take
// the defaults.
func (k Knowledge) PutLimits(ctx context.Context, l KnowledgeLimits) error {
	l.TenantID = k.tenant
	err := k.q(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "tenant_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"max_sources", "max_bytes", "max_chunks", "max_sitemap_pages"}),
	}).Create(&l).Error
	return wrap("put knowledge limits", err)
}

// KnowledgeUsage is what a tenant keeps in its knowledge bases.
type KnowledgeUsage struct {
	Sources int64
	Bytes   int64
	Chunks  int64
}

// Usage counts the tenant's sources, their bytes and their searchable
// chunks (of the current generation of each base). A sitemap's chunks
// are its pages' and counted with them.
func (k Knowledge) Usage(ctx context.Context) (KnowledgeUsage, error) {
	var u KnowledgeUsage
	err := k.q(ctx).Raw(`SELECT COUNT(*) AS sources, COALESCE(SUM(bytes), 0) AS bytes,
COALESCE(SUM(CASE WHEN kind = ? THEN 0 ELSE chunks END), 0) AS chunks
FROM knowledge_sources WHERE tenant_id = ?`, SourceSitemap, k.tenant).Scan(&u).Error
	return u, wrap("knowledge usage", err)
}
