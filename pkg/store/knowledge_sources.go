package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Kinds of knowledge source.
const (
	SourceFile    = "file"
	SourceURL     = "url"
	SourceSitemap = "sitemap"
	SourceText    = "text"
	SourceQA      = "qa"
)

// Statuses of a knowledge source.
const (
	SourceQueued   = "queued"
	SourceIndexing = "indexing"
	SourceReady    = "ready"
	SourceFailed   = "failed"
)

// KnowledgeSource is one document of a base and its place in the
// indexing queue: due at NextAttemptAt (nil: nothing to do), claimed by
// one worker at a time for a lease (see KnowledgeJobs).
type KnowledgeSource struct {
	ID          string `gorm:"primaryKey"`
	TenantID    string
	BaseID      string
	Kind        string
	Title       string
	URL         string
	Filename    string
	ContentType string
	Bytes       int64
	Tags        []string `gorm:"serializer:json"`
	// ParentID is the sitemap source that listed this page ('' for a
	// source of its own): the sitemap's refresh and deletion take its
	// pages with it.
	ParentID string
	// RefreshSeconds re-indexes a url or sitemap source that often; 0
	// never.
	RefreshSeconds int64
	ETag           string `gorm:"column:etag"`
	LastModified   string
	// ContentHash is unique in a base: the same document added twice is
	// one source.
	ContentHash string
	Status      string
	Error       string
	// Warning is what a source that is not failed should still tell its
	// owner: a sitemap cut at the tenant's limit.
	Warning string
	Pages   int
	Chunks  int
	// Generation is the index generation the source's chunks were last
	// written to.
	Generation    int64
	Attempts      int
	NextAttemptAt *time.Time
	Claim         string
	IndexedAt     *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// Content is the document AddSource stores with a new source (a
	// file's bytes, a text, questions and answers); nil for a url or
	// sitemap source. Reads of sources leave it nil: see Content.
	Content []byte `gorm:"-"`
}

func (KnowledgeSource) TableName() string { return "knowledge_sources" }

// knowledgeSourceContent is a source's raw content (see
// v28KnowledgeSourceContent).
type knowledgeSourceContent struct {
	SourceID string `gorm:"primaryKey"`
	TenantID string
	Content  []byte
}

func (knowledgeSourceContent) TableName() string { return "knowledge_source_contents" }

// knowledgeSourceTag is one tag of a source (see v25KnowledgeSourceTag).
type knowledgeSourceTag struct {
	SourceID string
	Tag      string
	BaseID   string
}

func (knowledgeSourceTag) TableName() string { return "knowledge_source_tags" }

// AddSource queues src in the base. A source whose content hash the base
// already holds creates nothing: created is false and src becomes the
// source already there. A source past the tenant's limits of sources or
// bytes is ErrKnowledgeLimit.
func (k Knowledge) AddSource(ctx context.Context, baseID string, src *KnowledgeSource) (created bool, err error) {
	switch src.Kind {
	case SourceFile, SourceURL, SourceSitemap, SourceText, SourceQA:
	default:
		return false, fmt.Errorf("store: add knowledge source: kind %q: one of file, url, sitemap, text, qa", src.Kind)
	}
	err = k.tx(ctx, func(tx Knowledge) error {
		if _, err := tx.Base(ctx, baseID); err != nil {
			return err
		}
		if found, err := tx.sourceByHash(ctx, baseID, src.ContentHash); found != nil || err != nil {
			if found != nil {
				*src = *found
			}
			return err
		}
		if err := tx.checkSourceLimits(ctx, src.Bytes); err != nil {
			return err
		}
		now := k.s.db.NowFunc()
		src.ID, src.TenantID, src.BaseID = NewID(PrefixKnowledgeSource), k.tenant, baseID
		src.Status, src.Error, src.NextAttemptAt, src.Claim, src.Attempts = SourceQueued, "", &now, "", 0
		src.Tags = uniqueTags(src.Tags)
		src.CreatedAt, src.UpdatedAt = now, now
		if err := tx.q(ctx).Create(src).Error; err != nil {
			return wrap("add knowledge source", err)
		}
		created = true
		if src.Content != nil {
			row := knowledgeSourceContent{SourceID: src.ID, TenantID: k.tenant, Content: src.Content}
			if err := tx.q(ctx).Create(&row).Error; err != nil {
				return wrap("store knowledge source content", err)
			}
		}
		for _, tag := range src.Tags {
			if err := tx.q(ctx).Create(&knowledgeSourceTag{SourceID: src.ID, Tag: tag, BaseID: baseID}).Error; err != nil {
				return wrap("tag knowledge source", err)
			}
		}
		return nil
	})
	if errors.Is(err, ErrConflict) && src.ContentHash != "" {
		// Another request added the same content first.
		found, ferr := k.sourceByHash(ctx, baseID, src.ContentHash)
		if ferr == nil && found != nil {
			*src = *found
			return false, nil
		}
	}
	return created, err
}

// sourceByHash returns the base's source holding hash, nil if none.
func (k Knowledge) sourceByHash(ctx context.Context, baseID, hash string) (*KnowledgeSource, error) {
	if hash == "" {
		return nil, nil
	}
	var out []KnowledgeSource
	err := k.q(ctx).Where("tenant_id = ? AND base_id = ? AND content_hash = ?", k.tenant, baseID, hash).Limit(1).Find(&out).Error
	if err != nil || len(out) == 0 {
		return nil, wrap("find knowledge source by hash", err)
	}
	return &out[0], nil
}

func (k Knowledge) checkSourceLimits(ctx context.Context, bytes int64) error {
	lim, err := k.Limits(ctx)
	if err != nil {
		return err
	}
	use, err := k.Usage(ctx)
	if err != nil {
		return err
	}
	if use.Sources+1 > *lim.MaxSources {
		return fmt.Errorf("store: add knowledge source: %d sources: %w", *lim.MaxSources, ErrKnowledgeLimit)
	}
	if use.Bytes+bytes > *lim.MaxBytes {
		return fmt.Errorf("store: add knowledge source: %d bytes: %w", *lim.MaxBytes, ErrKnowledgeLimit)
	}
	return nil
}

func uniqueTags(tags []string) []string {
	out := append([]string{}, tags...) // never nil: the column holds a JSON list
	slices.Sort(out)
	out = slices.Compact(out)
	return slices.DeleteFunc(out, func(t string) bool { return t == "" })
}

// Source returns one source of the base.
func (k Knowledge) Source(ctx context.Context, baseID, sourceID string) (*KnowledgeSource, error) {
	var src KnowledgeSource
	err := k.q(ctx).Where("tenant_id = ? AND base_id = ? AND id = ?", k.tenant, baseID, sourceID).First(&src).Error
	return &src, wrap("get knowledge source", err)
}

// Content returns the raw content a source was added with; a source
// without any (a url or sitemap) has none, and one of another tenant is
// ErrNotFound.
func (k Knowledge) Content(ctx context.Context, sourceID string) ([]byte, error) {
	var rows []knowledgeSourceContent
	err := k.q(ctx).Where("tenant_id = ? AND source_id = ?", k.tenant, sourceID).Limit(1).Find(&rows).Error
	if err != nil {
		return nil, wrap("get knowledge source content", err)
	}
	if len(rows) == 0 {
		var n int64
		err := k.q(ctx).Model(&KnowledgeSource{}).Where("tenant_id = ? AND id = ?", k.tenant, sourceID).Count(&n).Error
		if err != nil {
			return nil, wrap("get knowledge source content", err)
		}
		if n == 0 {
			return nil, wrap("get knowledge source content", ErrNotFound)
		}
		return nil, nil
	}
	return rows[0].Content, nil
}

// Sources lists the base's sources, oldest first.
func (k Knowledge) Sources(ctx context.Context, baseID string) ([]KnowledgeSource, error) {
	var out []KnowledgeSource
	err := k.q(ctx).Where("tenant_id = ? AND base_id = ?", k.tenant, baseID).Order("id").Find(&out).Error
	return out, wrap("list knowledge sources", err)
}

// DeleteSource deletes a source with its chunks and vectors in every
// generation, and a sitemap's pages with it.
func (k Knowledge) DeleteSource(ctx context.Context, baseID, sourceID string) error {
	return k.tx(ctx, func(tx Knowledge) error {
		// The base row first, as every writer of a base's sources locks it.
		if err := tx.bumpRevision(ctx, baseID); err != nil {
			return err
		}
		res := tx.q(ctx).Where("tenant_id = ? AND base_id = ? AND id = ?", k.tenant, baseID, sourceID).Delete(&KnowledgeSource{})
		if err := rowsOrNotFound("delete knowledge source", res); err != nil {
			return err
		}
		err := tx.q(ctx).Where("tenant_id = ? AND base_id = ? AND parent_id = ?", k.tenant, baseID, sourceID).Delete(&KnowledgeSource{}).Error
		return wrap("delete knowledge source pages", err)
	})
}

// RefreshSource queues a source to be indexed again now.
func (k Knowledge) RefreshSource(ctx context.Context, baseID, sourceID string) error {
	now := k.s.db.NowFunc()
	res := k.q(ctx).Model(&KnowledgeSource{}).Where("tenant_id = ? AND base_id = ? AND id = ?", k.tenant, baseID, sourceID).
		Updates(map[string]any{"status": SourceQueued, "error": "", "attempts": 0, "next_attempt_at": now, "updated_at": now})
	return rowsOrNotFound("refresh knowledge source", res)
}

// bumpRevision tells vector caches the base's searchable chunks changed.
func (k Knowledge) bumpRevision(ctx context.Context, baseID string) error {
	err := k.q(ctx).Exec("UPDATE knowledge_bases SET revision = revision + 1 WHERE tenant_id = ? AND id = ?", k.tenant, baseID).Error
	return wrap("bump knowledge revision", err)
}
