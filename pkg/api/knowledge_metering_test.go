package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// TestKnowledgeSearchesThroughTheAPIAndBotTestsMeterTheirEmbeddings: the
// search route's and the bot tests' query embeddings land in the usage
// ledger as embedding tokens (the search route's under no bot, the
// tests' under their bot), and the metrics count them and time both
// searches.
func TestKnowledgeSearchesThroughTheAPIAndBotTestsMeterTheirEmbeddings(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newKBEnv(t, st)
		ctx := context.Background()
		cl := e.client(e.key)
		embeddingTokens := func(t *testing.T) map[string]int64 {
			t.Helper()
			report, err := cl.Usage(ctx, "acme", "", "", "bot")
			if err != nil {
				t.Fatal(err)
			}
			byBot := map[string]int64{}
			for _, row := range report.Usage {
				byBot[row.Group] += row.EmbeddingTokens
			}
			return byBot
		}
		metric := func(t *testing.T, total int64, searches int) {
			t.Helper()
			metrics := e.raw(t, "GET", "/metrics", "", "").body
			for _, want := range []string{fmt.Sprintf("parley_knowledge_embedding_tokens_total %d\n", total),
				fmt.Sprintf("parley_knowledge_search_duration_seconds_count %d\n", searches)} {
				if !strings.Contains(metrics, want) {
					t.Errorf("/metrics lacks %q", strings.TrimSpace(want))
				}
			}
		}
		var searched int64
		t.Run("a search through the API", func(t *testing.T) {
			if _, err := cl.SearchKnowledge(ctx, "acme", "help", apiclient.SearchKnowledgeRequest{Query: "how long do refunds take"}); err != nil {
				t.Fatal(err)
			}
			searched = embeddingTokens(t)[""]
			if searched <= 0 {
				t.Fatalf("usage %v, want the search's embedding tokens under no bot", embeddingTokens(t))
			}
			metric(t, searched, 1)
		})
		t.Run("a bot's conversation tests searching the server's bases", func(t *testing.T) {
			tests := `{"tests": [{"name": "refunds", "turns": [{"user": "How long do refunds take?",
  "model": [{"tool_calls": [{"name": "search_knowledge", "arguments": {"query": "refund delay"}}]}, {"text": "Five business days [1]."}],
  "expect": {"retrieved": ["Refunds"], "cited": ["Refunds"]}}]}]}`
			config := `{"basic_settings": {"name": "Help"}, "knowledge": {"bases": ["help"]}}`
			bot, _, err := e.svc.Bots().CreateWithTests(ctx, platform.Operator(), "acme", "tested", []byte(config), []byte(tests))
			if err != nil {
				t.Fatal(err)
			}
			run, err := cl.RunTests(ctx, "acme", "tested", 1)
			if err != nil {
				t.Fatal(err)
			}
			if !run.Passed {
				t.Fatalf("tests failed: %+v", run)
			}
			byBot := embeddingTokens(t)
			if byBot[bot.ID] <= 0 || byBot[""] != searched {
				t.Fatalf("usage %v, want the tests' embedding tokens under bot %s", byBot, bot.ID)
			}
			metric(t, searched+byBot[bot.ID], 2)
		})
	})
}
