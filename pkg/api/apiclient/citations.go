package apiclient

// Citation is a passage of a bot's knowledge base an assistant message
// cites with its marker [n] (docs/knowledge.md).
type Citation struct {
	N      int    `json:"n"`
	Source string `json:"source"`
	Title  string `json:"title"`
	// URL is the source's address, when it has one; Locator where in it
	// the passage is ("Install > Linux", "#anchor", "p. 3").
	URL     string `json:"url,omitempty"`
	Locator string `json:"locator,omitempty"`
}

// CitationEvent is a stream's "citation" event: sent as the reply's text
// first shows the marker [n].
type CitationEvent struct {
	Type string `json:"type"` // "citation"
	Citation
}
