package store

import "context"

// KnowledgeStats is what every tenant's knowledge bases hold, for the
// metrics: sources by status, and the chunks of the ready ones.
type KnowledgeStats struct {
	Sources map[string]int64
	Chunks  int64
}

// Stats counts sources by status and their chunks, across tenants.
func (j KnowledgeJobs) Stats(ctx context.Context) (KnowledgeStats, error) {
	var rows []struct {
		Status  string
		Sources int64
		Chunks  int64
	}
	// A sitemap's chunks are its pages', counted with them.
	err := j.s.q(ctx).Raw(`SELECT status, COUNT(*) AS sources, COALESCE(SUM(CASE WHEN kind = ? THEN 0 ELSE chunks END), 0) AS chunks
FROM knowledge_sources GROUP BY status`, SourceSitemap).Scan(&rows).Error
	if err != nil {
		return KnowledgeStats{}, wrap("knowledge stats", err)
	}
	st := KnowledgeStats{Sources: map[string]int64{SourceQueued: 0, SourceIndexing: 0, SourceReady: 0, SourceFailed: 0}}
	for _, r := range rows {
		st.Sources[r.Status] = r.Sources
		st.Chunks += r.Chunks
	}
	return st, nil
}
