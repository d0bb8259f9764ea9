package chunk

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/parleyhq/parley/pkg/knowledge/extract"
)

// Options shape the chunks. A zero field uses the default.
type Options struct {
	// MaxTokens bounds a chunk's tokens (default 300), but for a single
	// word longer than that.
	MaxTokens int
	// Overlap is how many tokens of a chunk's end begin the next chunk
	// of the same section (default 40; negative: none).
	Overlap int
}

// Defaults of Options.
const (
	DefaultMaxTokens = 300
	DefaultOverlap   = 40
)

// Chunk is one piece of a document. Title is the heading of its section
// (the document's title before the first heading); Locator says where it
// is for a person: a heading path "Install > Linux", an "#anchor", a
// page "p. 3" or "pp. 3-4", joined by ", ". Page is its first page (0:
// none). Hash is the SHA-256 of Text, hex.
type Chunk struct {
	Text    string
	Title   string
	Locator string
	Page    int
	Tokens  int
	Hash    string
}

// Tokens estimates the tokens of text: its words times 4/3, rounded up.
func Tokens(text string) int {
	return (len(strings.Fields(text))*4 + 2) / 3
}

// wordsFor is how many words make about n tokens.
func wordsFor(n int) int {
	return n * 3 / 4
}

// Split cuts doc into chunks; see the package documentation.
func Split(doc *extract.Document, opt Options) []Chunk {
	if opt.MaxTokens <= 0 {
		opt.MaxTokens = DefaultMaxTokens
	}
	if opt.Overlap == 0 {
		opt.Overlap = DefaultOverlap
	}
	if opt.Overlap < 0 || opt.Overlap >= opt.MaxTokens {
		opt.Overlap = 0
	}
	s := &splitter{opt: opt, docTitle: doc.Title}
	for _, b := range doc.Blocks {
		switch b.Kind {
		case extract.Heading:
			s.flush()
			s.tail = nil
			for len(s.path) > 0 && s.path[len(s.path)-1].level >= b.Level {
				s.path = s.path[:len(s.path)-1]
			}
			s.path = append(s.path, heading{b.Level, b.Text})
			s.anchor = b.Anchor
		case extract.QA:
			s.flush()
			s.tail = nil
			s.setAnchor(b)
			s.add(b.Text, b.Page)
			s.flush()
			s.tail = nil
		case extract.Table:
			s.setAnchor(b)
			s.table(b)
		default:
			s.setAnchor(b)
			s.text(b.Text, b.Page)
		}
	}
	s.flush()
	return s.out
}

type heading struct {
	level int
	text  string
}

type splitter struct {
	opt      Options
	docTitle string
	path     []heading
	anchor   string

	parts     []string // the chunk being packed
	tokens    int
	firstPage int
	lastPage  int
	tail      []string // the words the next chunk of the section begins with
	out       []Chunk
}

// setAnchor takes a block's anchor as the section's when it has one.
func (s *splitter) setAnchor(b extract.Block) {
	if b.Anchor != "" && len(s.parts) == 0 {
		s.anchor = b.Anchor
	}
}

// text packs a paragraph-like unit, cutting it at word boundaries when
// it alone exceeds MaxTokens.
func (s *splitter) text(t string, page int) {
	if Tokens(t) <= s.opt.MaxTokens {
		s.fit(t, page)
		return
	}
	words := strings.Fields(t)
	// Leave room for the overlap each new chunk begins with.
	step := wordsFor(s.opt.MaxTokens - s.opt.Overlap)
	if step < 1 {
		step = 1
	}
	for len(words) > 0 {
		n := min(step, len(words))
		s.fit(strings.Join(words[:n], " "), page)
		words = words[n:]
	}
}

// fit adds t to the chunk being packed, first ending it if t would
// take it past MaxTokens.
func (s *splitter) fit(t string, page int) {
	if len(s.parts) > 0 && s.tokens+Tokens(t) > s.opt.MaxTokens {
		s.flush()
	}
	if len(s.parts) == 0 && len(s.tail) > 0 {
		// Begin with the previous chunk's end, as much as fits.
		room := wordsFor(s.opt.MaxTokens) - len(strings.Fields(t))
		tail := s.tail
		if room < len(tail) {
			tail = tail[len(tail)-max(room, 0):]
		}
		if len(tail) > 0 {
			s.add(strings.Join(tail, " "), page)
		}
	}
	s.add(t, page)
}

func (s *splitter) add(t string, page int) {
	if len(s.parts) == 0 || (page != 0 && s.firstPage == 0) {
		s.firstPage = page
	}
	if page != 0 {
		s.lastPage = page
	}
	s.parts = append(s.parts, t)
	s.tokens += Tokens(t)
}

// table keeps a table whole when it fits in a chunk, else cuts it
// between rows, each part starting with the header row.
func (s *splitter) table(b extract.Block) {
	if Tokens(b.Text) <= s.opt.MaxTokens || len(b.Rows) < 2 {
		s.fitWhole(b.Text, b.Page)
		return
	}
	header := extract.TableText(b.Rows[:1])
	rows := [][]string{}
	for _, r := range b.Rows[1:] {
		next := append(rows, r)
		if len(rows) > 0 && Tokens(header)+Tokens(extract.TableText(next)) > s.opt.MaxTokens {
			s.fitWhole(header+"\n"+extract.TableText(rows), b.Page)
			rows = [][]string{r}
			continue
		}
		rows = next
	}
	s.fitWhole(header+"\n"+extract.TableText(rows), b.Page)
}

// fitWhole adds t, which is not to be cut, after no overlap.
func (s *splitter) fitWhole(t string, page int) {
	if len(s.parts) > 0 && s.tokens+Tokens(t) > s.opt.MaxTokens {
		s.flush()
	}
	s.tail = nil
	s.add(t, page)
}

// flush ends the chunk being packed.
func (s *splitter) flush() {
	if len(s.parts) == 0 {
		return
	}
	text := strings.Join(s.parts, "\n\n")
	if strings.TrimSpace(text) == "" {
		// A block of no words (a table of empty cells): nothing to find.
		s.parts, s.tokens, s.firstPage, s.lastPage = nil, 0, 0, 0
		return
	}
	sum := sha256.Sum256([]byte(text))
	s.out = append(s.out, Chunk{
		Text:    text,
		Title:   s.title(),
		Locator: s.locator(),
		Page:    s.firstPage,
		Tokens:  Tokens(text),
		Hash:    hex.EncodeToString(sum[:]),
	})
	words := strings.Fields(text)
	s.tail = words[len(words)-min(wordsFor(s.opt.Overlap), len(words)):]
	s.parts, s.tokens, s.firstPage, s.lastPage = nil, 0, 0, 0
}

func (s *splitter) title() string {
	if len(s.path) > 0 {
		return s.path[len(s.path)-1].text
	}
	return s.docTitle
}

func (s *splitter) locator() string {
	var parts []string
	if len(s.path) > 0 {
		names := make([]string, len(s.path))
		for i, h := range s.path {
			names[i] = h.text
		}
		parts = append(parts, strings.Join(names, " > "))
	}
	if s.anchor != "" {
		parts = append(parts, "#"+s.anchor)
	}
	switch {
	case s.firstPage != 0 && s.lastPage > s.firstPage:
		parts = append(parts, fmt.Sprintf("pp. %d-%d", s.firstPage, s.lastPage))
	case s.firstPage != 0:
		parts = append(parts, fmt.Sprintf("p. %d", s.firstPage))
	}
	return strings.Join(parts, ", ")
}
