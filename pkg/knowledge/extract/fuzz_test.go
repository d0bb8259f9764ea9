package extract_test

import (
	"errors"
	"testing"

	"github.com/parleyhq/parley/pkg/knowledge/extract"
)

// FuzzExtract feeds every reader arbitrary bytes: each must return a
// document or an ErrPermanent error, never panic or hang.
func FuzzExtract(f *testing.F) {
	seeds := []struct{ name, data string }{
		{"a.md", "# T\n\n- a\n| x | y |\n|---|---|\n| 1 | 2 |\n```\ncode\n"},
		{"a.txt", "one\n\ntwo"},
		{"a.html", "<title>t</title><h1 id=x>h</h1><p>p<table><tr><td>1</table>"},
		{"a.csv", "question,answer\n\"q\",a\n"},
		{"a.jsonl", `{"question":"q","answer":"a"}`},
		{"a.json", `[{"question":"q","answer":"a"}]`},
		{"a.pdf", "%PDF-1.4\n1 0 obj << >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF"},
		{"a.docx", "PK\x03\x04"},
	}
	for _, s := range seeds {
		f.Add(s.name, []byte(s.data))
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		doc, err := extract.Extract(data, name, "", extract.Limits{MaxUnpacked: 1 << 20})
		if err != nil && !errors.Is(err, extract.ErrPermanent) {
			t.Fatalf("error not marked permanent: %v", err)
		}
		if err == nil && len(doc.Blocks) == 0 {
			t.Fatal("a document without blocks")
		}
	})
}
