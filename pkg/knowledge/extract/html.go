package extract

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// skipped are elements whose text is not the page's content.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Nav: true, atom.Footer: true, atom.Noscript: true,
	atom.Template: true, atom.Svg: true, atom.Head: true, atom.Iframe: true, atom.Form: true,
}

// htmlText reads headings, paragraphs, list items, tables and code from
// an HTML page, leaving out scripts, styles, navigation and footers. A
// block takes the nearest id above it as its anchor.
func htmlText(text string) (*Document, error) {
	root, err := html.Parse(strings.NewReader(text))
	if err != nil {
		return nil, fail("the HTML cannot be parsed: %v", err)
	}
	doc := &Document{}
	w := htmlWalker{doc: doc}
	w.walk(root)
	w.flush()
	if t := findTitle(root); t != "" {
		doc.Title = t
	} else {
		for _, b := range doc.Blocks {
			if b.Kind == Heading && b.Level == 1 {
				doc.Title = b.Text
				break
			}
		}
	}
	return doc, nil
}

type htmlWalker struct {
	doc    *Document
	inline strings.Builder // text of the paragraph being read
	anchor string          // the latest id seen
}

// flush ends the loose text read so far as a paragraph.
func (w *htmlWalker) flush() {
	if t := collapse(w.inline.String()); t != "" {
		w.doc.Blocks = append(w.doc.Blocks, Block{Kind: Paragraph, Text: t, Anchor: w.anchor})
	}
	w.inline.Reset()
}

func (w *htmlWalker) add(kind string, level int, n *html.Node, text string) {
	w.flush()
	if text = collapse(text); text != "" {
		w.doc.Blocks = append(w.doc.Blocks, Block{Kind: kind, Level: level, Text: text, Anchor: w.anchor})
	}
}

func (w *htmlWalker) walk(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		w.inline.WriteString(n.Data)
		return
	case html.ElementNode:
		if skipped[n.DataAtom] {
			return
		}
		if id := attr(n, "id"); id != "" {
			if block(n.DataAtom) {
				w.flush()
			}
			w.anchor = id
		}
		switch n.DataAtom {
		case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
			w.add(Heading, int(n.Data[1]-'0'), n, textOf(n))
			return
		case atom.P, atom.Blockquote, atom.Dd, atom.Dt, atom.Figcaption:
			w.add(Paragraph, 0, n, textOf(n))
			return
		case atom.Li:
			w.flush()
			if hasBlockChildren(n) { // a nested list: its items stand alone
				break
			}
			w.add(ListItem, 0, n, textOf(n))
			return
		case atom.Pre:
			w.flush()
			if t := strings.Trim(textOf(n), "\n"); strings.TrimSpace(t) != "" {
				w.doc.Blocks = append(w.doc.Blocks, Block{Kind: Code, Text: t, Anchor: w.anchor})
			}
			return
		case atom.Table:
			w.flush()
			if rows := tableRows(n); len(rows) > 0 {
				b := tableBlock(rows)
				b.Anchor = w.anchor
				w.doc.Blocks = append(w.doc.Blocks, b)
			}
			return
		case atom.Br:
			w.inline.WriteString(" ")
		}
		if block(n.DataAtom) {
			w.flush()
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.walk(c)
	}
	if n.Type == html.ElementNode && block(n.DataAtom) {
		w.flush()
	}
}

// block says whether an element breaks the flow of text.
func block(a atom.Atom) bool {
	switch a {
	case atom.Div, atom.Section, atom.Article, atom.Main, atom.Header, atom.Aside, atom.Ul, atom.Ol,
		atom.Dl, atom.Li, atom.Body, atom.Figure, atom.Details, atom.Summary, atom.Hr:
		return true
	}
	return false
}

func hasBlockChildren(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && (c.DataAtom == atom.Ul || c.DataAtom == atom.Ol || c.DataAtom == atom.P || c.DataAtom == atom.Table) {
			return true
		}
	}
	return false
}

func tableRows(t *html.Node) [][]string {
	var rows [][]string
	var visit func(n *html.Node)
	visit = func(n *html.Node) {
		if n.Type == html.ElementNode && n.DataAtom == atom.Tr {
			var row []string
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && (c.DataAtom == atom.Td || c.DataAtom == atom.Th) {
					row = append(row, collapse(textOf(c)))
				}
			}
			if len(row) > 0 {
				rows = append(rows, row)
			}
			return
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Table && n != t {
			return // a nested table is not this one's rows
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c)
		}
	}
	visit(t)
	return rows
}

// textOf is the text inside n, without skipped elements.
func textOf(n *html.Node) string {
	var b strings.Builder
	var visit func(n *html.Node)
	visit = func(n *html.Node) {
		switch {
		case n.Type == html.TextNode:
			b.WriteString(n.Data)
		case n.Type == html.ElementNode && skipped[n.DataAtom]:
			return
		case n.Type == html.ElementNode && n.DataAtom == atom.Br:
			b.WriteString("\n")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c)
		}
	}
	visit(n)
	return b.String()
}

func findTitle(n *html.Node) string {
	if n.Type == html.ElementNode && n.DataAtom == atom.Title {
		return collapse(textOf(n))
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := findTitle(c); t != "" {
			return t
		}
	}
	return ""
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// collapse joins a text's words by single spaces.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
