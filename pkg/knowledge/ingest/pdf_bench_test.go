package ingest_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/knowledge/extract"
	"github.com/parleyhq/parley/pkg/knowledge/extract/extracttest"
	"github.com/parleyhq/parley/pkg/knowledge/ingest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// BenchmarkKnowledgeIngestPDF indexes a PDF of 300 pages of about 450
// words each through the worker: extract, chunk, embed with the fake
// model over HTTP, store. One op is the whole PDF; extract-s is the time
// reading the PDF takes alone, measured once.
func BenchmarkKnowledgeIngestPDF(b *testing.B) {
	pdf := bookPDF(300)
	for _, backend := range storetest.Open(b) {
		b.Run(backend.Name, func(b *testing.B) {
			st := backend.Store
			ctx := context.Background()
			tn := &store.Tenant{Slug: "pdf", Name: "pdf"}
			if err := st.Tenants().Create(ctx, tn); err != nil {
				b.Fatal(err)
			}
			tenant = tn.ID
			w, _, base := setup(b, st, "book", "fake", ingest.Options{})
			begin := time.Now()
			if _, err := extract.Extract(pdf, "book.pdf", "application/pdf", extract.Limits{}); err != nil {
				b.Fatal(err)
			}
			extracting := time.Since(begin)
			chunks := 0
			i := 0
			for b.Loop() {
				// The same bytes under another name and hash each time, so
				// the base takes them as a new source.
				src := addSource(b, st, base.ID, store.KnowledgeSource{Kind: store.SourceFile, Filename: fmt.Sprintf("book-%d.pdf", i), Content: pdf})
				if n, err := w.RunOnce(ctx); err != nil || n != 1 {
					b.Fatal(n, err)
				}
				got := source(b, st, src)
				if got.Status != store.SourceReady {
					b.Fatalf("the PDF is %s: %s", got.Status, got.Error)
				}
				chunks = got.Chunks
				i++
			}
			b.ReportMetric(float64(chunks), "chunks")
			b.ReportMetric(extracting.Seconds(), "extract-s")
		})
	}
}

// bookPDF is a PDF of pages of plain prose: 45 lines of about ten words
// drawn from a small vocabulary.
func bookPDF(pages int) []byte {
	rng := rand.New(rand.NewPCG(3, 0))
	words := strings.Fields(`the a of to and in is for on with by as that this from be are at or an it
server database table index query backup replica connection transaction lock vacuum page chunk
setting memory disk network user role schema column row value error log file system storage
configure restore monitor upgrade install create delete update insert select grant revoke check`)
	texts := make([]string, pages)
	for p := range texts {
		var page strings.Builder
		for range 45 {
			for w := range 10 {
				if w > 0 {
					page.WriteByte(' ')
				}
				page.WriteString(words[rng.IntN(len(words))])
			}
			page.WriteString(".\n")
		}
		texts[p] = strings.TrimSuffix(page.String(), "\n")
	}
	return extracttest.PDF(texts...)
}
