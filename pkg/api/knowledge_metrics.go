package api

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// knowledgeMetrics are the knowledge bases' metrics: the ingestion
// queue (sources by status, chunks), read from the database at each
// scrape so every replica reports the same numbers whichever worker
// indexed what, the latency of searches through this server, this
// server's indexing (time per source, chunks stored), and the
// tokens this process spent embedding (the platform counts them: the
// indexer's chunks, the search route's, the bots' and their tests'
// queries).
type knowledgeMetrics struct {
	platform        *platform.Service
	sources         *prometheus.Desc
	chunks          *prometheus.Desc
	embeddingTokens *prometheus.Desc
	chunksIndexed   *prometheus.Desc
}

func newKnowledgeMetrics(p *platform.Service) *knowledgeMetrics {
	return &knowledgeMetrics{
		platform: p,
		sources: prometheus.NewDesc("parley_knowledge_sources",
			"Knowledge sources of every tenant by status: queued, indexing, ready, failed.", []string{"status"}, nil),
		chunks: prometheus.NewDesc("parley_knowledge_chunks",
			"Searchable chunks of every tenant's knowledge sources.", nil, nil),
		embeddingTokens: prometheus.NewDesc("parley_knowledge_embedding_tokens_total",
			"Tokens spent embedding knowledge: the indexer's chunks and the searches' queries (metered in the usage ledger as embedding_tokens).", nil, nil),
		chunksIndexed: prometheus.NewDesc("parley_knowledge_chunks_indexed_total",
			"Chunks this server's indexer stored (sources indexed again count again).", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (m *knowledgeMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.sources
	ch <- m.chunks
	ch <- m.embeddingTokens
	ch <- m.chunksIndexed
	if m.platform != nil {
		m.platform.Knowledge().SearchSeconds().Describe(ch)
		m.platform.Knowledge().IndexSeconds().Describe(ch)
	}
}

// Collect implements prometheus.Collector. A database that does not
// answer within a few seconds leaves the gauges out of this scrape
// rather than holding it.
func (m *knowledgeMetrics) Collect(ch chan<- prometheus.Metric) {
	if m.platform == nil {
		return
	}
	m.platform.Knowledge().SearchSeconds().Collect(ch)
	m.platform.Knowledge().IndexSeconds().Collect(ch)
	ch <- prometheus.MustNewConstMetric(m.embeddingTokens, prometheus.CounterValue, float64(m.platform.Knowledge().EmbeddingTokens()))
	ch <- prometheus.MustNewConstMetric(m.chunksIndexed, prometheus.CounterValue, float64(m.platform.Knowledge().ChunksIndexed()))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := m.platform.Knowledge().Stats(ctx)
	if err != nil {
		return
	}
	for _, status := range []string{store.SourceQueued, store.SourceIndexing, store.SourceReady, store.SourceFailed} {
		ch <- prometheus.MustNewConstMetric(m.sources, prometheus.GaugeValue, float64(st.Sources[status]), status)
	}
	ch <- prometheus.MustNewConstMetric(m.chunks, prometheus.GaugeValue, float64(st.Chunks))
}
