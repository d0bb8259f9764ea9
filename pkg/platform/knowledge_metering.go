package platform

import (
	"context"

	"github.com/parleyhq/parley/pkg/store"
)

// CountEmbeddingTokens adds n tokens spent embedding knowledge to the
// metric; for a caller that meters the usage ledger itself (the dialog
// runtime batches its rows) or cannot (the indexer).
func (s *Service) CountEmbeddingTokens(n int) {
	if n > 0 {
		s.embeddingTokens.Add(int64(n))
	}
}

// KnowledgeEmbeddingTokens is the tokens this process spent embedding
// knowledge since it started, for the metrics.
func (s *Service) KnowledgeEmbeddingTokens() int64 { return s.embeddingTokens.Load() }

// meterEmbedding counts n embedding tokens in the metric and in the
// tenant's usage ledger (and so its daily quota), under bot botID ("" for
// a search through the API) and key keyID. The search it metered
// succeeded: a ledger that failed is logged rather than failing it.
func (s *Service) meterEmbedding(ctx context.Context, tenantID, botID, keyID string, n int) {
	if n <= 0 {
		return
	}
	s.CountEmbeddingTokens(n)
	now := s.now().UTC()
	u := store.Usage{Day: now.Format(store.DayFormat), Hour: now.Format(store.HourFormat), BotID: botID, KeyID: keyID,
		EmbeddingTokens: int64(n)}
	if err := s.store.Tenant(tenantID).Usage().Add(ctx, &u); err != nil {
		s.log.ErrorContext(ctx, "knowledge: embedding tokens not metered", "tenant", tenantID, "tokens", n, "err", err)
	}
}
