package chunk_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/knowledge/chunk"
	"github.com/parleyhq/parley/pkg/knowledge/extract"
)

func words(prefix string, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return strings.Join(w, " ")
}

func TestSplit(t *testing.T) {
	t.Run("a heading starts a section and the locator is its heading path", func(t *testing.T) {
		doc := &extract.Document{Title: "Guide", Blocks: []extract.Block{
			{Kind: "paragraph", Text: "Welcome."},
			{Kind: "heading", Level: 1, Text: "Install"},
			{Kind: "paragraph", Text: "Download it."},
			{Kind: "heading", Level: 2, Text: "Linux"},
			{Kind: "list_item", Text: "apt install x"},
			{Kind: "list_item", Text: "dnf install x"},
			{Kind: "heading", Level: 1, Text: "Use", Anchor: "use"},
			{Kind: "paragraph", Text: "Run it.", Page: 3},
		}}
		var got [][3]string
		for _, c := range chunk.Split(doc, chunk.Options{}) {
			got = append(got, [3]string{c.Title, c.Locator, c.Text})
		}
		want := [][3]string{
			{"Guide", "", "Welcome."},
			{"Install", "Install", "Download it."},
			{"Linux", "Install > Linux", "apt install x\n\ndnf install x"},
			{"Use", "Use, #use, p. 3", "Run it."},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("chunks:\n got %q\nwant %q", got, want)
		}
	})
	t.Run("paragraphs are packed up to MaxTokens and consecutive chunks overlap", func(t *testing.T) {
		doc := &extract.Document{Blocks: []extract.Block{
			{Kind: "paragraph", Text: words("a", 45)}, // 60 tokens
			{Kind: "paragraph", Text: words("b", 45)},
			{Kind: "paragraph", Text: words("c", 45)},
		}}
		cs := chunk.Split(doc, chunk.Options{MaxTokens: 130, Overlap: 8})
		if len(cs) != 2 {
			t.Fatalf("%d chunks, want 2: %+v", len(cs), cs)
		}
		if !strings.HasPrefix(cs[1].Text, "b39 b40 b41 b42 b43 b44\n\nc0 ") {
			t.Errorf("the second chunk does not begin with the first's last 6 words: %q", cs[1].Text[:40])
		}
		for _, c := range cs {
			if c.Tokens > 130 || c.Tokens != chunk.Tokens(c.Text) {
				t.Errorf("chunk of %d tokens (counted %d)", c.Tokens, chunk.Tokens(c.Text))
			}
		}
	})
	t.Run("a paragraph longer than MaxTokens is cut at words", func(t *testing.T) {
		cs := chunk.Split(&extract.Document{Blocks: []extract.Block{{Kind: "paragraph", Text: words("w", 1000)}}}, chunk.Options{MaxTokens: 100, Overlap: 20})
		if len(cs) < 10 {
			t.Fatalf("%d chunks", len(cs))
		}
		for _, c := range cs {
			if c.Tokens > 100 {
				t.Errorf("chunk of %d tokens", c.Tokens)
			}
		}
		if !strings.Contains(cs[len(cs)-1].Text, "w999") {
			t.Error("the last word is lost")
		}
	})
	t.Run("a table that fits is one chunk, a larger one is cut between rows repeating the header", func(t *testing.T) {
		rows := [][]string{{"Name", "Value"}}
		for i := range 40 {
			rows = append(rows, []string{fmt.Sprintf("row%d", i), "some value here"})
		}
		doc := &extract.Document{Blocks: []extract.Block{{Kind: "table", Rows: rows, Text: extract.TableText(rows)}}}
		if cs := chunk.Split(doc, chunk.Options{MaxTokens: 1000}); len(cs) != 1 {
			t.Fatalf("a fitting table gave %d chunks", len(cs))
		}
		cs := chunk.Split(doc, chunk.Options{MaxTokens: 60})
		if len(cs) < 3 {
			t.Fatalf("%d chunks", len(cs))
		}
		seen := 0
		for _, c := range cs {
			if !strings.HasPrefix(c.Text, "Name | Value\n") {
				t.Errorf("a part does not start with the header: %q", c.Text)
			}
			seen += strings.Count(c.Text, "row")
		}
		if seen != 40 {
			t.Errorf("%d rows in the parts, want 40", seen)
		}
	})
	t.Run("each question and answer is one chunk without overlap", func(t *testing.T) {
		doc := &extract.Document{Blocks: []extract.Block{
			{Kind: "qa", Text: "Q: a?\nA: b."}, {Kind: "qa", Text: "Q: c?\nA: d."},
		}}
		cs := chunk.Split(doc, chunk.Options{})
		if len(cs) != 2 || cs[1].Text != "Q: c?\nA: d." {
			t.Fatalf("chunks %+v", cs)
		}
	})
	t.Run("a chunk across pages says so", func(t *testing.T) {
		doc := &extract.Document{Blocks: []extract.Block{{Kind: "paragraph", Text: "one", Page: 2}, {Kind: "paragraph", Text: "two", Page: 3}}}
		if cs := chunk.Split(doc, chunk.Options{}); cs[0].Locator != "pp. 2-3" || cs[0].Page != 2 {
			t.Fatalf("chunk %+v", cs[0])
		}
	})
	t.Run("the same document gives the same chunks", func(t *testing.T) {
		doc := &extract.Document{Blocks: []extract.Block{{Kind: "paragraph", Text: words("x", 900)}}}
		a, b := chunk.Split(doc, chunk.Options{}), chunk.Split(doc, chunk.Options{})
		if !reflect.DeepEqual(a, b) || a[0].Hash == a[1].Hash {
			t.Fatal("not deterministic, or hashes collide")
		}
	})
}
