package main

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// TestAServersKnowledgeBaseIndexesWhatIsAddedAndFindsItByMeaning: the
// real program indexes a queued source on its own (no restart, no
// command), and a search finds the right section by keyword and by the
// vectors its embedding provider made.
func TestAServersKnowledgeBaseIndexesWhatIsAddedAndFindsItByMeaning(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		chatServer(t, env, llmtest.Options{})
		srv := startParley(t, env)
		ctx := context.Background()
		created, err := apiclient.New(srv.URL, e2eToken).CreateTenant(ctx, apiclient.CreateTenantRequest{Slug: "acme", Name: "Acme"})
		if err != nil {
			t.Fatal(err)
		}
		admin := apiclient.New(srv.URL, created.APIKey.Key)
		if _, err := admin.CreateKnowledgeBase(ctx, "acme", apiclient.CreateKnowledgeBaseRequest{Name: "Help",
			Embedding: &apiclient.Embedding{Provider: "openai", Model: "text-embedding-3-small"}}); err != nil {
			t.Fatal(err)
		}
		guide := "# Returns\n\nYou can send back any unworn item within 30 days for a full refund.\n\n" +
			"# Shipping\n\nParcels leave our warehouse the next working day and arrive in three to five days.\n"
		src, _, err := admin.AddFileSource(ctx, "acme", "help", "guide.md", strings.NewReader(guide), nil, "")
		if err != nil {
			t.Fatal(err)
		}
		ready := waitForSource(t, admin, src.ID)
		if ready.Status != "ready" || ready.Chunks < 2 {
			t.Fatalf("source %+v, want ready with a chunk per section", ready)
		}
		indexed := embeddingTokens(t, admin)
		if indexed <= 0 {
			t.Errorf("the tenant's ledger holds %d embedding tokens once its source is indexed, want the indexer's", indexed)
		}
		res, err := admin.SearchKnowledge(ctx, "acme", "help", apiclient.SearchKnowledgeRequest{Query: "how long until my parcel arrives"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Results) == 0 || !strings.Contains(res.Results[0].Locator, "Shipping") || res.Results[0].VectorRank != 1 {
			t.Fatalf("results %+v, want the Shipping section first, first by vector too", res.Results)
		}
		// The ledger holds the indexer's tokens and the search's query; the
		// metric counts the same tokens.
		metered := embeddingTokens(t, admin)
		_, metrics := get(t, srv.URL+"/metrics")
		m := regexp.MustCompile(`(?m)^parley_knowledge_embedding_tokens_total (\d+)$`).FindStringSubmatch(metrics)
		if m == nil {
			t.Fatalf("/metrics lacks parley_knowledge_embedding_tokens_total")
		}
		if total, _ := strconv.ParseInt(m[1], 10, 64); metered <= indexed || total != metered {
			t.Errorf("parley_knowledge_embedding_tokens_total %d, the ledger %d (%d of them the indexer's): want the search's on top, and the same in both", total, metered, indexed)
		}
		for _, want := range []string{`parley_knowledge_index_duration_seconds_count{kind="file",outcome="ready"} 1`,
			"parley_knowledge_chunks_indexed_total " + strconv.Itoa(ready.Chunks)} {
			if !strings.Contains(metrics, want+"\n") {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})
}

// embeddingTokens adds up the tenant's embedding tokens in its usage
// ledger.
func embeddingTokens(t *testing.T, c *apiclient.Client) int64 {
	t.Helper()
	usage, err := c.Usage(context.Background(), "acme", "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, row := range usage.Usage {
		n += row.EmbeddingTokens
	}
	return n
}

// waitForSource polls a source until it leaves the queue. The indexer is
// woken by the add, so this waits for work, not for a schedule.
func waitForSource(t *testing.T, c *apiclient.Client, id string) *apiclient.KnowledgeSource {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		src, err := c.GetSource(context.Background(), "acme", "help", id)
		if err != nil {
			t.Fatal(err)
		}
		if src.Status == "ready" || src.Status == "failed" || time.Now().After(deadline) {
			return src
		}
		time.Sleep(50 * time.Millisecond)
	}
}
