package chunk_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/knowledge/chunk"
	"github.com/parleyhq/parley/pkg/knowledge/extract"
)

// FuzzSplit: whatever Markdown and options, Split loses no word of the
// document's text, adds none, and each chunk's Tokens and Hash are its
// text's.
func FuzzSplit(f *testing.F) {
	f.Add("# Install\n\nRun the installer.\n\n## Linux\n\nUse the package.\n", 300, 40)
	f.Add("| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n", 3, 1)
	f.Add(strings.Repeat("word ", 500), 10, 9)
	f.Add("Q: why?\nA: because.\n\n### Deep {#anchor}\n\ntext", 1, -1)
	f.Fuzz(func(t *testing.T, markdown string, maxTokens, overlap int) {
		doc, err := extract.Extract([]byte(markdown), "doc.md", "text/markdown", extract.Limits{})
		if err != nil {
			return
		}
		chunks := chunk.Split(doc, chunk.Options{MaxTokens: maxTokens % 1000, Overlap: overlap % 1000})
		inDoc := map[string]bool{}
		var want []string
		for _, b := range doc.Blocks {
			for _, w := range strings.Fields(b.Text) {
				inDoc[w] = true
				if b.Kind != extract.Heading {
					want = append(want, w)
				}
			}
		}
		inChunks := map[string]bool{}
		for i, c := range chunks {
			if strings.TrimSpace(c.Text) == "" {
				t.Fatalf("chunk %d is empty", i)
			}
			if c.Tokens != chunk.Tokens(c.Text) {
				t.Fatalf("chunk %d says %d tokens, its text has %d", i, c.Tokens, chunk.Tokens(c.Text))
			}
			if sum := sha256.Sum256([]byte(c.Text)); c.Hash != hex.EncodeToString(sum[:]) {
				t.Fatalf("chunk %d's hash is not its text's", i)
			}
			for _, w := range strings.Fields(c.Text) {
				if !inDoc[w] {
					t.Fatalf("chunk %d has %q, which the document does not", i, w)
				}
				inChunks[w] = true
			}
		}
		for _, w := range want {
			if !inChunks[w] {
				t.Fatalf("the word %q of the document is in no chunk", w)
			}
		}
	})
}
