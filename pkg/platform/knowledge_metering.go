package platform

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parleyhq/parley/pkg/store"
)

// knowledgeMeters measure the knowledge bases' use in this process, for
// /metrics (the API exposes them): the tokens spent embedding (the
// indexer's chunks, every search's query) and the latency of searches
// (the search route's and the bots', their tests' included).
type knowledgeMeters struct {
	embeddingTokens atomic.Int64
	searchSeconds   prometheus.Histogram
}

func newKnowledgeMeters() *knowledgeMeters {
	return &knowledgeMeters{searchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "parley_knowledge_search_duration_seconds",
		Help:    "Latency of knowledge base searches (embedding the query, keyword and vector, fused): the search route's and the bots'.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	})}
}

// SearchSeconds is the histogram of search latencies, for the
// metrics.
func (k Knowledge) SearchSeconds() prometheus.Histogram {
	s := k.svc
	return s.knowledge.searchSeconds
}

// observeSearch records the latency of a search that began at start.
func (k Knowledge) observeSearch(start time.Time) {
	s := k.svc
	s.knowledge.searchSeconds.Observe(time.Since(start).Seconds())
}

// CountEmbeddingTokens adds n tokens spent embedding knowledge to the
// metric; for a caller that meters the usage ledger itself (the dialog
// runtime batches its rows) or cannot (the indexer).
func (k Knowledge) CountEmbeddingTokens(n int) {
	s := k.svc
	if n > 0 {
		s.knowledge.embeddingTokens.Add(int64(n))
	}
}

// EmbeddingTokens is the tokens this process spent embedding
// knowledge since it started, for the metrics.
func (k Knowledge) EmbeddingTokens() int64 {
	s := k.svc
	return s.knowledge.embeddingTokens.Load()
}

// meterEmbedding counts n embedding tokens in the metric and in the
// tenant's usage ledger (and so its daily quota), under bot botID ("" for
// a search through the API) and key keyID. The search it metered
// succeeded: a ledger that failed is logged rather than failing it.
func (k Knowledge) meterEmbedding(ctx context.Context, tenantID, botID, keyID string, n int) {
	s := k.svc
	if n <= 0 {
		return
	}
	s.Knowledge().CountEmbeddingTokens(n)
	now := s.now().UTC()
	u := store.Usage{Day: now.Format(store.DayFormat), Hour: now.Format(store.HourFormat), BotID: botID, KeyID: keyID,
		EmbeddingTokens: int64(n)}
	if err := s.store.Tenant(tenantID).Usage().Add(ctx, &u); err != nil {
		s.log.ErrorContext(ctx, "knowledge: embedding tokens not metered", "tenant", tenantID, "tokens", n, "err", err)
	}
}
