package cite

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Passage is a piece of a knowledge source shown to the model.
type Passage struct {
	Source string
	Title  string
	URL    string
	// Link is where a reader opens a passage without a URL (a signed
	// link to an uploaded file); the model is not shown it.
	Link    string
	Locator string
	// Chunk is the passage's place in its source; with Source it tells
	// one passage from another.
	Chunk int
	Text  string
}

// Citation is a numbered passage an answer cites: the wire shape of a
// message's citations and of the citation stream event.
type Citation struct {
	N       int    `json:"n"`
	Source  string `json:"source"`
	Title   string `json:"title"`
	URL     string `json:"url,omitempty"`
	Locator string `json:"locator,omitempty"`
}

// Book numbers the passages of one run. It is safe for concurrent use:
// tools may run in parallel.
type Book struct {
	mu      sync.Mutex
	byKey   map[string]int
	after   int       // numbers start past it
	entries []Passage // entries[n-after-1]
}

// NewBook returns an empty Book numbering from 1.
func NewBook() *Book { return NewBookAfter(0) }

// NewBookAfter returns an empty Book numbering from last+1: a dialog's
// later run numbers past the markers its history already holds, so an old
// [n] is never read as a new passage.
func NewBookAfter(last int) *Book { return &Book{byKey: map[string]int{}, after: max(last, 0)} }

// LastMarker is the highest [n] marker in texts, 0 when none.
func LastMarker(texts ...string) int {
	last := 0
	for _, t := range texts {
		for _, m := range marker.FindAllStringSubmatch(t, -1) {
			n, _ := strconv.Atoi(m[1])
			last = max(last, n)
		}
	}
	return last
}

// Number gives p its number, the one it already has when it was numbered
// before.
func (b *Book) Number(p Passage) int {
	key := p.Source + "\x00" + strconv.Itoa(p.Chunk)
	b.mu.Lock()
	defer b.mu.Unlock()
	if n, ok := b.byKey[key]; ok {
		return n
	}
	b.entries = append(b.entries, p)
	n := b.after + len(b.entries)
	b.byKey[key] = n
	return n
}

// Lookup returns the citation of number n, false when the Book gave no
// such number.
func (b *Book) Lookup(n int) (Citation, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n <= b.after || n > b.after+len(b.entries) {
		return Citation{}, false
	}
	p := b.entries[n-b.after-1]
	url := p.URL
	if url == "" && p.Link != "" {
		url = Link(p.Link, p.Locator)
	}
	return Citation{N: n, Source: p.Source, Title: p.Title, URL: url, Locator: p.Locator}, true
}

// Len is how many numbers the Book has given.
func (b *Book) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.entries)
}

// Format numbers passages and writes them for the model, each as
// "[n] title (locator) url" and its text, within maxChars (0: no bound):
// a passage that does not fit is left out whole, so none is cut in the
// middle of a sentence the model might quote.
func (b *Book) Format(passages []Passage, maxChars int) string {
	var sb strings.Builder
	for _, p := range passages {
		entry := header(b.Number(p), p) + "\n" + strings.TrimSpace(p.Text) + "\n\n"
		if maxChars > 0 && sb.Len()+len(entry) > maxChars {
			continue
		}
		sb.WriteString(entry)
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

func header(n int, p Passage) string {
	h := fmt.Sprintf("[%d] %s", n, p.Title)
	if p.Locator != "" {
		h += " (" + p.Locator + ")"
	}
	if p.URL != "" {
		h += " " + p.URL
	}
	return h
}

// marker is a citation marker: [n] with n from 1 to 999.
var marker = regexp.MustCompile(`\[([1-9][0-9]{0,2})\]`)

// Cited returns the citations of the markers text uses, in the order they
// first appear; markers of numbers the Book never gave are left out.
func (b *Book) Cited(text string) []Citation {
	var out []Citation
	seen := map[int]bool{}
	for _, m := range marker.FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[1])
		if seen[n] {
			continue
		}
		seen[n] = true
		if c, ok := b.Lookup(n); ok {
			out = append(out, c)
		}
	}
	return out
}

// Markers finds the citations of streamed text as their markers first
// appear: feed it each delta; a marker split across deltas is found once
// its closing bracket arrives.
type Markers struct {
	book *Book
	text strings.Builder
	seen map[int]bool
}

// NewMarkers returns a scanner of text cited from book.
func NewMarkers(book *Book) *Markers { return &Markers{book: book, seen: map[int]bool{}} }

// Add appends a delta and returns the citations whose markers appear for
// the first time.
func (m *Markers) Add(delta string) []Citation {
	start := max(0, m.text.Len()-5) // a marker is at most "[999]": rescan its width
	m.text.WriteString(delta)
	var out []Citation
	for _, c := range m.book.Cited(m.text.String()[start:]) {
		if !m.seen[c.N] {
			m.seen[c.N] = true
			out = append(out, c)
		}
	}
	return out
}

// Link is where a citation points a reader: its URL with the locator's
// place in it, "#page=3" for a PDF page or the "#anchor" of a heading;
// "" without a URL.
func Link(url, locator string) string {
	if url == "" || strings.Contains(url, "#") {
		return url
	}
	for _, part := range strings.Split(locator, ", ") {
		switch {
		case strings.HasPrefix(part, "#"):
			return url + part
		case strings.HasPrefix(part, "p. "):
			return url + "#page=" + strings.TrimPrefix(part, "p. ")
		case strings.HasPrefix(part, "pp. "):
			first, _, _ := strings.Cut(strings.TrimPrefix(part, "pp. "), "-")
			return url + "#page=" + first
		}
	}
	return url
}
