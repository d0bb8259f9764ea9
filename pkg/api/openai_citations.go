package api

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/knowledge/cite"
)

// annotation is a reply's citation as OpenAI's chat completions give web
// search results: a url_citation over the span of content that cites it.
type annotation struct {
	Type        string      `json:"type"` // "url_citation"
	URLCitation urlCitation `json:"url_citation"`
}

// urlCitation's indexes count characters of the message's content, the
// end one past the span.
type urlCitation struct {
	StartIndex int    `json:"start_index"`
	EndIndex   int    `json:"end_index"`
	Title      string `json:"title"`
	URL        string `json:"url"`
}

// annotationsFor are the url_citations of the citations with a URL, each
// over its marker's first appearance in text (a citation whose marker the
// text lacks is left out). The URL points at the passage's page or anchor.
// An uploaded file's signed link is this server's path, not an address
// (an OpenAI client would not know where to resolve it): left out too.
func annotationsFor(text string, citations []cite.Citation) []annotation {
	var out []annotation
	for _, c := range citations {
		link := cite.Link(c.URL, c.Locator)
		marker := "[" + strconv.Itoa(c.N) + "]"
		at := strings.Index(text, marker)
		if link == "" || strings.HasPrefix(link, "/") || at < 0 {
			continue
		}
		start := utf8.RuneCountInString(text[:at])
		out = append(out, annotation{Type: "url_citation", URLCitation: urlCitation{StartIndex: start,
			EndIndex: start + len(marker), Title: c.Title, URL: link}})
	}
	return out
}

// turnCitations are the citations of a turn's assistant messages, each
// number once.
func turnCitations(t dialog.Turn) []cite.Citation {
	var out []cite.Citation
	seen := map[int]bool{}
	for _, m := range t.Messages {
		for _, c := range m.Citations {
			if !seen[c.N] {
				seen[c.N] = true
				out = append(out, c)
			}
		}
	}
	return out
}
