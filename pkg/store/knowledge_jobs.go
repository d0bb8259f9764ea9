package store

import (
	"context"
	"fmt"
	"time"
)

// KnowledgeJobs is the queue of knowledge sources waiting to be indexed,
// across tenants, for the indexing workers (pkg/worker): a source is due
// at its NextAttemptAt and claimed by one worker at a time, like a
// channel job. Each claimed source carries its tenant, by which every
// later write is scoped.
type KnowledgeJobs struct {
	s   *Store
	now func() time.Time
}

// KnowledgeJobs returns the indexing queue, on the database's clock.
func (s *Store) KnowledgeJobs() KnowledgeJobs { return KnowledgeJobs{s: s, now: s.db.NowFunc} }

// WithClock returns the queue on now's clock: what is due, and when a
// source indexed now is due again (its refresh). The indexing worker
// passes its own, so a test advances time instead of waiting for it.
func (j KnowledgeJobs) WithClock(now func() time.Time) KnowledgeJobs {
	j.now = func() time.Time { return now().UTC() }
	return j
}

// KnowledgeIndexed is what a worker learnt indexing a source.
type KnowledgeIndexed struct {
	// Title names the source when it had no title of its own.
	Title        string
	ContentHash  string
	ETag         string
	LastModified string
	Pages        int
	// Unchanged keeps the source's chunks as they are (a refresh found
	// the same content); Chunks is then ignored. A source whose chunks
	// are not in the generation being written (a reindex) must be indexed
	// instead: Done refuses Unchanged for it with ErrConflict.
	Unchanged bool
	Chunks    []KnowledgeChunk
	// Bytes is the size of a fetched page, counted against the tenant's
	// bytes limit (0: keep the source's own, as for an upload).
	Bytes int64
}

// Claim claims up to limit due sources for claim (the worker's token, its
// instance id first), marking them indexing: each is due again after
// lease, should the worker die, and counts one attempt more. On
// PostgreSQL concurrent workers skip each other's rows and a dead
// instance's claims are due at once; on SQLite the write lock serialises
// claims. skip names sources the caller has in flight.
func (j KnowledgeJobs) Claim(ctx context.Context, claim string, lease time.Duration, limit int, skip []string) ([]KnowledgeSource, error) {
	s := j.s
	now := j.now()
	var out []KnowledgeSource
	err := s.Tx(ctx, func(tx *Store) error {
		ids, err := tx.dueIDs(ctx, "knowledge_sources", "next_attempt_at IS NOT NULL AND ", claim, now, limit, skip)
		if err != nil || len(ids) == 0 {
			return err
		}
		err = tx.q(ctx).Exec(`UPDATE knowledge_sources SET claim = ?, status = ?, next_attempt_at = ?, attempts = attempts + 1, updated_at = ?
WHERE id IN ?`, claim, SourceIndexing, now.Add(lease), now, ids).Error
		if err != nil {
			return err
		}
		return tx.q(ctx).Where("id IN ?", ids).Order("id").Find(&out).Error
	})
	return out, wrap("claim knowledge sources", err)
}

// ReleaseClaims makes every claimed source due now. Only a server that
// holds the SQLite data dir for itself may call it, at start.
func (j KnowledgeJobs) ReleaseClaims(ctx context.Context) (int64, error) {
	now := j.now()
	res := j.s.q(ctx).Exec("UPDATE knowledge_sources SET claim = '', next_attempt_at = ? WHERE claim <> ''", now)
	return res.RowsAffected, wrap("release knowledge claims", res.Error)
}

// holdClaim checks, and on PostgreSQL locks until the transaction ends,
// that src's claim still holds: a claim that lapsed and was taken over
// writes nothing (ErrConflict).
func (k Knowledge) holdClaim(ctx context.Context, op string, src *KnowledgeSource) error {
	res := k.q(ctx).Exec("UPDATE knowledge_sources SET updated_at = ? WHERE tenant_id = ? AND id = ? AND claim = ? AND claim <> ''",
		k.s.db.NowFunc(), k.tenant, src.ID, src.Claim)
	if res.Error != nil {
		return wrap(op, res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap(op, ErrConflict)
	}
	return nil
}

// Done stores what indexing the claimed src produced and makes it ready:
// its chunks replace the ones it had in the generation being written
// (the building one during a reindex, else the current one), and the
// reindex swaps in when src was the last source it waited for. A source
// with a refresh interval is due again after it. A content hash another
// source of the base holds is ErrConflict, a chunk count past the
// tenant's limit ErrKnowledgeLimit; either leaves src claimed, for Fail.
func (j KnowledgeJobs) Done(ctx context.Context, src *KnowledgeSource, r KnowledgeIndexed) error {
	return j.s.Tenant(src.TenantID).Knowledge().tx(ctx, func(k Knowledge) error {
		// The base first, as Reindex and DeleteSource lock it, so two
		// transactions never wait on each other's rows.
		b, err := k.lockBase(ctx, src.BaseID)
		if err != nil {
			return err
		}
		if err := k.holdClaim(ctx, "finish knowledge source", src); err != nil {
			return err
		}
		if other, err := k.sourceByHash(ctx, b.ID, r.ContentHash); err != nil || (other != nil && other.ID != src.ID) {
			if err == nil {
				err = fmt.Errorf("store: finish knowledge source: the same content as source %s: %w", other.ID, ErrConflict)
			}
			return err
		}
		gen := b.Generation
		if b.Building != 0 {
			gen = b.Building
		}
		if r.Bytes > 0 {
			if err := k.checkBytes(ctx, r.Bytes-src.Bytes); err != nil {
				return err
			}
		}
		now := j.now()
		fields := map[string]any{"status": SourceReady, "error": "", "claim": "", "attempts": 0, "pages": r.Pages,
			"content_hash": r.ContentHash, "etag": r.ETag, "last_modified": r.LastModified, "generation": gen,
			"indexed_at": now, "updated_at": now, "next_attempt_at": nextRefresh(src, now)}
		if r.Unchanged {
			if src.Generation != gen {
				return fmt.Errorf("store: finish knowledge source: unchanged, but not indexed into generation %d: %w", gen, ErrConflict)
			}
		} else {
			if err := k.writeChunks(ctx, b, src, gen, r.Chunks); err != nil {
				return err
			}
			fields["chunks"] = len(r.Chunks)
		}
		if src.Title == "" && r.Title != "" {
			fields["title"] = r.Title
		}
		if r.Bytes > 0 {
			fields["bytes"] = r.Bytes
		}
		if err := k.q(ctx).Model(&KnowledgeSource{}).Where("tenant_id = ? AND id = ?", k.tenant, src.ID).Updates(fields).Error; err != nil {
			return wrap("finish knowledge source", err)
		}
		if err := k.rollUp(ctx, src.ParentID); err != nil {
			return err
		}
		if gen == b.Generation && !r.Unchanged {
			if err := k.bumpRevision(ctx, b.ID); err != nil {
				return err
			}
		}
		return k.swapIfBuilt(ctx, b)
	})
}

// Fail records why indexing the claimed src failed. A zero retryAt gives
// up: the source is failed (and, with a refresh interval, tried again
// after it); otherwise it is queued again for retryAt, the error kept
// for whoever looks meanwhile.
func (j KnowledgeJobs) Fail(ctx context.Context, src *KnowledgeSource, reason string, retryAt time.Time) error {
	return j.s.Tenant(src.TenantID).Knowledge().tx(ctx, func(k Knowledge) error {
		b, err := k.lockBase(ctx, src.BaseID)
		if err != nil {
			return err
		}
		if err := k.holdClaim(ctx, "fail knowledge source", src); err != nil {
			return err
		}
		now := j.now()
		fields := map[string]any{"status": SourceQueued, "error": reason, "claim": "", "next_attempt_at": retryAt, "updated_at": now}
		if retryAt.IsZero() {
			fields["status"], fields["next_attempt_at"] = SourceFailed, nextRefresh(src, now)
		}
		if err := k.q(ctx).Model(&KnowledgeSource{}).Where("tenant_id = ? AND id = ?", k.tenant, src.ID).Updates(fields).Error; err != nil {
			return wrap("fail knowledge source", err)
		}
		if err := k.rollUp(ctx, src.ParentID); err != nil {
			return err
		}
		return k.swapIfBuilt(ctx, b)
	})
}

// nextRefresh is when src is due again after being indexed at now: nil
// unless it refreshes.
func nextRefresh(src *KnowledgeSource, now time.Time) *time.Time {
	if src.RefreshSeconds <= 0 {
		return nil
	}
	at := now.Add(time.Duration(src.RefreshSeconds) * time.Second)
	return &at
}

// checkBytes refuses growing the tenant's stored bytes by more past its
// limit (ErrKnowledgeLimit).
func (k Knowledge) checkBytes(ctx context.Context, more int64) error {
	if more <= 0 {
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
	if use.Bytes+more > *lim.MaxBytes {
		return fmt.Errorf("store: index knowledge source: %d bytes: %w", *lim.MaxBytes, ErrKnowledgeLimit)
	}
	return nil
}

// rollUp makes a sitemap's chunks the sum of its pages' as they are
// indexed, so its progress shows while they are; a parentless source has
// nothing to roll up. Writers of a base's sources lock the base first,
// so two pages finishing at once add up in turn.
func (k Knowledge) rollUp(ctx context.Context, parentID string) error {
	if parentID == "" {
		return nil
	}
	err := k.q(ctx).Exec(`UPDATE knowledge_sources SET chunks = (SELECT COALESCE(SUM(c.chunks), 0) FROM knowledge_sources c
WHERE c.tenant_id = ? AND c.parent_id = ?) WHERE tenant_id = ? AND id = ?`, k.tenant, parentID, k.tenant, parentID).Error
	return wrap("roll up sitemap chunks", err)
}
