package api_test

import (
	"context"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// A knowledge search is a hit when it returns a passage at or above the
// bot's min_score, in tool and auto mode alike; a reply after searches
// that all found nothing makes its question unanswered (knowledge_miss).
func TestKnowledgeHitRateAndMissesInAnalytics(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newKBEnv(t, st)
		ctx := context.Background()
		cl := e.client(e.key)
		e.bot(t, "tooled", `{"bases": ["help"], "min_score": 0.6}`)
		e.bot(t, "auto", `{"bases": ["help"], "mode": "auto", "min_score": 0.6}`)
		const missed = "Do you sell zebra saddles?"

		ask := func(bot, text string, replies ...llmtest.ServerReply) {
			t.Helper()
			d := e.dialog(t, bot, e.key, `{"user_id": "u-`+bot+`"}`)
			e.llm.Enqueue(replies...)
			if _, err := cl.SendMessage(ctx, "acme", d, text); err != nil {
				t.Fatal(err)
			}
			if _, err := cl.CloseDialog(ctx, "acme", d, "done"); err != nil {
				t.Fatal(err)
			}
		}
		search := func(query string) llmtest.ServerReply {
			return llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "k1", Name: "search_knowledge", Arguments: `{"query": "` + query + `"}`}}}
		}
		ask("tooled", "How long do refunds take?", search("refunds take business days"), llmtest.ServerReply{Text: "Five business days [1]."})
		ask("tooled", missed, search("zebra saddles"), llmtest.ServerReply{Text: "I could not find that."})
		ask("auto", "How long do refunds take?", llmtest.ServerReply{Text: "Five business days [1]."})
		ask("auto", missed, llmtest.ServerReply{Text: "I could not find that."})

		for _, bot := range []string{"tooled", "auto"} {
			a, err := cl.Analytics(ctx, "acme", apiclient.AnalyticsQuery{Bot: bot})
			if err != nil {
				t.Fatal(err)
			}
			if a.KnowledgeSearches != 2 || a.KnowledgeHitRate == nil || *a.KnowledgeHitRate != 0.5 {
				t.Errorf("%s: %d searches, hit rate %v; want 2 and 0.5", bot, a.KnowledgeSearches, rate(a.KnowledgeHitRate))
			}
			un, err := cl.Unanswered(ctx, "acme", apiclient.AnalyticsQuery{Bot: bot})
			if err != nil {
				t.Fatal(err)
			}
			if len(un.Groups) != 1 || un.Groups[0].Question != missed || un.Groups[0].Reasons["knowledge_miss"] != 1 {
				t.Errorf("%s: unanswered %+v, want only %q (knowledge_miss)", bot, un.Groups, missed)
			}
		}
		all, err := cl.Analytics(ctx, "acme", apiclient.AnalyticsQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if all.KnowledgeSearches != 4 || *all.KnowledgeHitRate != 0.5 {
			t.Errorf("tenant: %d searches, hit rate %v; want 4 and 0.5", all.KnowledgeSearches, *all.KnowledgeHitRate)
		}
	})
}
