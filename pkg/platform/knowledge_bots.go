package platform

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/bottest"
	"github.com/parleyhq/parley/pkg/knowledge/cite"
	"github.com/parleyhq/parley/pkg/knowledge/retrieve"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/store"
)

// BotSearch is one search a running bot makes of its knowledge bases
// (the config's knowledge section) for a dialog.
type BotSearch struct {
	// Bases are the bot's base slugs; one the tenant no longer has is
	// skipped.
	Bases    []string
	Query    string
	TopK     int
	MinScore float64
	// Restricted limits the search to what the dialog's end user may read
	// (knowledge.tags_from): sources tagged with one of Tags, and
	// untagged sources. Unrestricted searches every source.
	Restricted bool
	Tags       []string
}

// BotSearchResult is what a BotSearch found, best first, and the tokens
// its query's embeddings cost, for metering.
type BotSearchResult struct {
	Results         []retrieve.Result
	EmbeddingTokens int
}

// SearchForBot searches the tenant's bases for a running bot: the runtime
// calls it for search_knowledge and for auto mode, after the dialog's
// caller was authorised. The results of several bases are merged by score.
func (k Knowledge) SearchForBot(ctx context.Context, tenantID string, q BotSearch) (BotSearchResult, error) {
	s := k.svc
	defer s.Knowledge().observeSearch(time.Now())
	var out BotSearchResult
	kn := s.store.Tenant(tenantID).Knowledge()
	topK := cmp.Or(q.TopK, retrieve.DefaultTopK)
	vectors := map[string][]float32{} // by provider and model: bases sharing a model embed the query once
	for _, slug := range q.Bases {
		b, err := kn.Base(ctx, slug)
		if errors.Is(err, store.ErrNotFound) {
			s.log.WarnContext(ctx, "knowledge: a bot names a base the tenant no longer has", "tenant", tenantID, "base", slug)
			continue
		}
		if err != nil {
			return out, s.internal(ctx, "knowledge base for a bot", err)
		}
		query := retrieve.Query{Text: q.Query, TopK: topK, MinScore: q.MinScore, Untagged: q.Restricted, Tags: q.Tags}
		if q.Restricted && len(q.Tags) == 0 {
			query.Tags = nil // the untagged sources only
		}
		key := b.EmbeddingProvider + "\x00" + b.EmbeddingModel
		vec, ok := vectors[key]
		if !ok {
			var tokens int
			if vec, tokens, err = s.Knowledge().embedBotQuery(ctx, b, q.Query); err != nil {
				return out, err
			}
			out.EmbeddingTokens += tokens
			vectors[key] = vec
		}
		query.Vector = vec
		results, err := s.searcher.get(ctx, s).Search(ctx, tenantID, b.ID, query)
		if err != nil {
			return out, s.internal(ctx, "search knowledge for a bot", err)
		}
		for i, r := range results {
			if r.File {
				// The search kept this source for this user: the link
				// carries that permission to the citation's reader.
				results[i].Link = k.FileLink(tenantID, b.ID, r.Source)
			}
		}
		out.Results = append(out.Results, results...)
	}
	slices.SortStableFunc(out.Results, func(a, b retrieve.Result) int { return cmp.Compare(b.Score, a.Score) })
	out.Results = out.Results[:min(topK, len(out.Results))]
	return out, nil
}

// embedBotQuery embeds a search query with the base's model, or answers
// nil for a base searched by keyword alone, with the tokens the provider
// billed (the caller meters them). A provider that fails is the caller's
// error to see (retryable when the provider said so): a search that
// quietly lost its vector half would rank differently for no visible
// reason.
func (k Knowledge) embedBotQuery(ctx context.Context, b *store.KnowledgeBase, query string) ([]float32, int, error) {
	s := k.svc
	if b.EmbeddingProvider == "" || b.EmbeddingDims == 0 || s.opts.Embedders == nil {
		return nil, 0, nil
	}
	e, ok := s.opts.Embedders(b.EmbeddingProvider)
	if !ok {
		return nil, 0, Errorf(CodeInvalid, "the base's embedding provider %q is not configured on this server", b.EmbeddingProvider)
	}
	vecs, usage, err := e.Embed(ctx, b.EmbeddingModel, []string{query})
	if err != nil {
		var le *llm.Error
		if errors.As(err, &le) && le.Retryable {
			return nil, 0, Wrap(err, CodeRateLimited, "the embedding provider is busy; try again")
		}
		return nil, 0, s.internal(ctx, "embed knowledge query", err)
	}
	if len(vecs) != 1 || len(vecs[0]) != b.EmbeddingDims {
		return nil, 0, s.internal(ctx, "embed knowledge query", fmt.Errorf("the provider answered %d vectors for one query, or of another dimension than the base's %d", len(vecs), b.EmbeddingDims))
	}
	return vecs[0], usage.InputTokens, nil
}

// testSearch is the search of bot's knowledge bases its conversation
// tests make when the test file supplies no passages: the tenant's real
// bases, as a dialog without an end user searches them. The queries'
// embeddings are metered to the bot (botID).
func (kn Knowledge) testSearch(tenantID, botID string, bot *botconfig.Bot) bottest.KnowledgeSearch {
	s := kn.svc
	k := bot.Knowledge
	return func(ctx context.Context, query string) ([]cite.Passage, error) {
		found, err := s.Knowledge().SearchForBot(ctx, tenantID, BotSearch{Bases: k.Bases, Query: query, TopK: k.TopK, MinScore: k.MinScore})
		s.Knowledge().meterEmbedding(ctx, tenantID, botID, "", found.EmbeddingTokens)
		if err != nil {
			return nil, err
		}
		out := make([]cite.Passage, len(found.Results))
		for i, r := range found.Results {
			out[i] = cite.Passage{Source: r.Source, Title: r.Title, URL: r.URL, Locator: r.Locator, Chunk: r.Chunk, Text: r.Text}
		}
		return out, nil
	}
}

// checkKnowledge refuses a config whose knowledge section names a base
// the tenant does not have, with a pointer to each.
func (k Knowledge) checkKnowledge(ctx context.Context, tenantID string, bot *botconfig.Bot) error {
	s := k.svc
	var details []Detail
	for _, u := range bot.KnowledgeUses() {
		b, err := s.store.Tenant(tenantID).Knowledge().Base(ctx, u.Base)
		switch {
		case errors.Is(err, store.ErrNotFound) || (err == nil && b.Slug != u.Base):
			details = append(details, Detail{Pointer: u.Pointer, Message: fmt.Sprintf(
				"unknown knowledge base %q; create it first, or name one of the tenant's bases by its slug", u.Base)})
		case err != nil:
			return s.internal(ctx, "check knowledge bases", err)
		}
	}
	if len(details) == 0 {
		return nil
	}
	return Invalid(details...)
}
