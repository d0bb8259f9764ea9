package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
)

// SitemapPage is one page a sitemap lists: its URL, and why it is not
// fetched ("" to fetch it): an address the outbound policy refuses, a
// path robots.txt disallows.
type SitemapPage struct {
	URL     string
	Skipped string
}

// URLSourceHash is the content hash a url or sitemap source holds until
// its page is fetched: the same URL added twice to a base is one source.
func URLSourceHash(kind, url string) string {
	sum := sha256.Sum256([]byte(kind + ":" + url))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// DoneSitemap makes the claimed sitemap src ready, listing pages: each
// page is a url source of its own (ParentID src.ID, with the sitemap's
// tags) queued to be fetched, or failed with its Skipped reason. Pages
// listed before and not now are deleted with their chunks; pages still
// listed are queued to be fetched again (they ask whether they changed).
// A URL the base holds as another source is left to that source. Pages
// past the tenant's sources limit are not added, and warning says so
// with what the caller put in it (a sitemap cut at the pages limit).
func (j KnowledgeJobs) DoneSitemap(ctx context.Context, src *KnowledgeSource, pages []SitemapPage, warning string) error {
	return j.s.Tenant(src.TenantID).Knowledge().tx(ctx, func(k Knowledge) error {
		b, err := k.lockBase(ctx, src.BaseID)
		if err != nil {
			return err
		}
		if err := k.holdClaim(ctx, "finish sitemap", src); err != nil {
			return err
		}
		now := j.now()
		var had []KnowledgeSource
		if err := k.q(ctx).Select("id, url, claim").Where("tenant_id = ? AND parent_id = ?", k.tenant, src.ID).Find(&had).Error; err != nil {
			return wrap("read sitemap pages", err)
		}
		listed := make(map[string]SitemapPage, len(pages))
		for _, p := range pages {
			listed[p.URL] = p
		}
		var gone, skipped, again []string
		kept := map[string]bool{}
		for _, h := range had {
			p, ok := listed[h.URL]
			switch {
			case !ok:
				gone = append(gone, h.ID)
			case p.Skipped != "":
				skipped = append(skipped, h.ID)
				if err := k.q(ctx).Model(&KnowledgeSource{}).Where("id = ?", h.ID).Updates(map[string]any{"status": SourceFailed,
					"error": p.Skipped, "chunks": 0, "claim": "", "next_attempt_at": nil, "updated_at": now}).Error; err != nil {
					return wrap("skip sitemap page", err)
				}
			case h.Claim == "":
				again = append(again, h.ID)
			}
			kept[h.URL] = ok
		}
		if len(gone) > 0 {
			if err := k.q(ctx).Where("tenant_id = ? AND id IN ?", k.tenant, gone).Delete(&KnowledgeSource{}).Error; err != nil {
				return wrap("delete sitemap pages", err)
			}
		}
		if len(skipped) > 0 {
			if err := k.q(ctx).Exec("DELETE FROM knowledge_chunks WHERE tenant_id = ? AND source_id IN ?", k.tenant, skipped).Error; err != nil {
				return wrap("delete skipped sitemap pages' chunks", err)
			}
		}
		if len(again) > 0 {
			if err := k.q(ctx).Model(&KnowledgeSource{}).Where("id IN ?", again).Updates(map[string]any{"status": SourceQueued,
				"error": "", "attempts": 0, "next_attempt_at": now, "updated_at": now}).Error; err != nil {
				return wrap("queue sitemap pages", err)
			}
		}
		added, err := k.addPages(ctx, src, pages, kept, now)
		if err != nil {
			return err
		}
		if added < 0 {
			lim, _ := k.Limits(ctx)
			if warning != "" {
				warning += "; "
			}
			warning += fmt.Sprintf("%d more pages are not indexed: the tenant's knowledge bases hold at most %d sources", -added, *lim.MaxSources)
		}
		var count int64
		if err := k.q(ctx).Model(&KnowledgeSource{}).Where("tenant_id = ? AND parent_id = ?", k.tenant, src.ID).Count(&count).Error; err != nil {
			return wrap("count sitemap pages", err)
		}
		gen := b.Generation
		if b.Building != 0 {
			gen = b.Building
		}
		fields := map[string]any{"status": SourceReady, "error": "", "warning": warning, "claim": "", "attempts": 0,
			"pages": count, "generation": gen, "indexed_at": now, "updated_at": now, "next_attempt_at": nextRefresh(src, now)}
		if err := k.q(ctx).Model(&KnowledgeSource{}).Where("tenant_id = ? AND id = ?", k.tenant, src.ID).Updates(fields).Error; err != nil {
			return wrap("finish sitemap", err)
		}
		if err := k.rollUp(ctx, src.ID); err != nil {
			return err
		}
		if err := k.bumpRevision(ctx, b.ID); err != nil {
			return err
		}
		return k.swapIfBuilt(ctx, b)
	})
}

// addPages adds the pages not in had as sources of the sitemap src, as
// many as the tenant's sources limit allows. It returns how many it
// added, or minus how many it left out for the limit.
func (k Knowledge) addPages(ctx context.Context, src *KnowledgeSource, pages []SitemapPage, had map[string]bool, now time.Time) (int, error) {
	var fresh []SitemapPage
	hashes := []string{}
	for _, p := range pages {
		if _, ok := had[p.URL]; !ok {
			fresh = append(fresh, p)
			hashes = append(hashes, URLSourceHash(SourceURL, p.URL))
		}
	}
	if len(fresh) == 0 {
		return 0, nil
	}
	var taken []string
	for start := 0; start < len(hashes); start += 500 {
		var part []string
		err := k.q(ctx).Model(&KnowledgeSource{}).Where("tenant_id = ? AND base_id = ? AND content_hash IN ?", k.tenant, src.BaseID,
			hashes[start:min(start+500, len(hashes))]).Pluck("content_hash", &part).Error
		if err != nil {
			return 0, wrap("find sitemap pages", err)
		}
		taken = append(taken, part...)
	}
	isTaken := make(map[string]bool, len(taken))
	for _, h := range taken {
		isTaken[h] = true
	}
	lim, err := k.Limits(ctx)
	if err != nil {
		return 0, err
	}
	use, err := k.Usage(ctx)
	if err != nil {
		return 0, err
	}
	room := *lim.MaxSources - use.Sources
	var rows []KnowledgeSource
	var tags []knowledgeSourceTag
	left := 0
	for i, p := range fresh {
		if isTaken[hashes[i]] {
			continue
		}
		if int64(len(rows)) >= room {
			left++
			continue
		}
		row := KnowledgeSource{ID: NewID(PrefixKnowledgeSource), TenantID: k.tenant, BaseID: src.BaseID, Kind: SourceURL,
			URL: p.URL, ParentID: src.ID, Tags: uniqueTags(src.Tags), ContentHash: hashes[i], Status: SourceQueued,
			CreatedAt: now, UpdatedAt: now}
		if p.Skipped != "" {
			row.Status, row.Error = SourceFailed, p.Skipped
		} else {
			at := now
			row.NextAttemptAt = &at
		}
		rows = append(rows, row)
		for _, tag := range row.Tags {
			tags = append(tags, knowledgeSourceTag{SourceID: row.ID, Tag: tag, BaseID: src.BaseID})
		}
	}
	if len(rows) > 0 {
		if err := k.q(ctx).CreateInBatches(rows, 200).Error; err != nil {
			return 0, wrap("add sitemap pages", err)
		}
	}
	if len(tags) > 0 {
		if err := k.q(ctx).CreateInBatches(tags, 500).Error; err != nil {
			return 0, wrap("tag sitemap pages", err)
		}
	}
	if left > 0 {
		return -left, nil
	}
	return len(rows), nil
}
