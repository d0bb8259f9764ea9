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
	chunksIndexed   atomic.Int64
	searchSeconds   prometheus.Histogram
	indexSeconds    *prometheus.HistogramVec
}

func newKnowledgeMeters() *knowledgeMeters {
	return &knowledgeMeters{searchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "parley_knowledge_search_duration_seconds",
		Help:    "Latency of knowledge base searches (embedding the query, keyword and vector, fused): the search route's and the bots'.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	}), indexSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "parley_knowledge_index_duration_seconds",
		Help:    "Time this server's indexer spent on one attempt at a knowledge source (fetching, extracting, chunking, embedding, storing), by the source's kind and the outcome: ready, retry or failed.",
		Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300},
	}, []string{"kind", "outcome"})}
}

// IndexSeconds is the histogram of the indexer's attempts, for the
// metrics.
func (k Knowledge) IndexSeconds() *prometheus.HistogramVec {
	s := k.svc
	return s.knowledge.indexSeconds
}

// ObserveIndexing records an attempt of the indexer at a source of kind
// that ended with outcome after took, having stored chunks.
func (k Knowledge) ObserveIndexing(kind, outcome string, took time.Duration, chunks int) {
	s := k.svc
	s.knowledge.indexSeconds.WithLabelValues(kind, outcome).Observe(took.Seconds())
	s.knowledge.chunksIndexed.Add(int64(chunks))
}

// ChunksIndexed is the chunks this process's indexer stored since it
// started, for the metrics.
func (k Knowledge) ChunksIndexed() int64 {
	s := k.svc
	return s.knowledge.chunksIndexed.Load()
}

// MeterIndexing counts n tokens the indexer spent embedding chunks of a
// source of tenantID in the metric and in the tenant's usage ledger,
// under no bot and no key: a tenant's indexing counts toward its daily
// quota like its searches.
func (k Knowledge) MeterIndexing(ctx context.Context, tenantID string, n int) {
	k.meterEmbedding(ctx, tenantID, "", "", n)
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
// runtime batches its rows).
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
