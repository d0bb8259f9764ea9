package platform

import (
	"context"

	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/webhook"
)

// SourceSettled writes the webhook event of a source whose
// indexing ended: knowledge.source_ready, or knowledge.source_failed with
// the reason (docs/events.md). The indexing worker calls it; a source
// still queued for a retry has not settled and gets no event.
func (k Knowledge) SourceSettled(ctx context.Context, src *store.KnowledgeSource) error {
	s := k.svc
	typ := webhook.KnowledgeSourceReady
	switch src.Status {
	case store.SourceReady:
	case store.SourceFailed:
		typ = webhook.KnowledgeSourceFailed
	default:
		return nil
	}
	data := webhook.KnowledgeSource{BaseID: src.BaseID, SourceID: src.ID, Kind: src.Kind, Title: src.Title,
		URL: src.URL, Filename: src.Filename, Status: src.Status, Chunks: src.Chunks, Pages: src.Pages}
	if typ == webhook.KnowledgeSourceReady {
		data.IndexedAt = src.IndexedAt
	} else {
		data.Error = src.Error
	}
	return s.Webhooks().WithEvent(ctx, Event{TenantID: src.TenantID, Type: typ}, func(st *store.Store) (any, error) {
		b, err := st.Tenant(src.TenantID).Knowledge().Base(ctx, src.BaseID)
		if err != nil {
			return nil, err
		}
		data.Base = b.Slug
		return data, nil
	})
}

// Queued is nudged when this process queues a source (added,
// refreshed or reindexed), so the indexer starts on it at once rather
// than at its next poll.
func (k Knowledge) Queued() <-chan struct{} {
	s := k.svc
	return s.queued
}

func (k Knowledge) wakeIndexer() {
	s := k.svc
	select {
	case s.queued <- struct{}{}:
	default:
	}
}
