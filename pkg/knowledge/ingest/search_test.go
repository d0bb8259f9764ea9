package ingest_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/parleyhq/parley/pkg/knowledge/ingest"
	"github.com/parleyhq/parley/pkg/knowledge/retrieve"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

const handbook = `# Handbook

## Account

### Password

To reset your password, open Settings and choose Reset password; a link arrives by email.

### Billing

Invoices are sent on the first day of each month.

## Office

Our office in Berlin is closed on public holidays.
`

func TestIndexedSourcesAreFoundBySearch(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tn := &store.Tenant{Slug: "acme", Name: "Acme"}
		if err := st.Tenants().Create(ctx, tn); err != nil {
			t.Fatal(err)
		}
		tenant = tn.ID
		w, _, b := setup(t, st, "handbook", "fake", ingest.Options{})
		addSource(t, st, b.ID, store.KnowledgeSource{Kind: store.SourceFile, Filename: "handbook.md", Content: []byte(handbook)})
		drain(t, w)
		q := "How can I reset my password?"
		res, err := retrieve.New(ctx, st, slog.New(slog.DiscardHandler)).Search(ctx, tenant, b.Slug, retrieve.Query{Text: q, Vector: llmtest.Embed(q), TopK: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) == 0 || res[0].Locator != "Handbook > Account > Password" || res[0].VectorRank != 1 {
			t.Fatalf("results %+v", res)
		}
	})
}
