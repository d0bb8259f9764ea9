package extract

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/transform"
)

// Kinds of block.
const (
	Heading   = "heading"
	Paragraph = "paragraph"
	ListItem  = "list_item"
	Table     = "table"
	Code      = "code"
	QA        = "qa"
)

// Document is the text of one source, in reading order.
type Document struct {
	Title    string
	Pages    int
	Blocks   []Block
	Warnings []string
}

// Block is one structural piece of a document. Level is a heading's
// level (1 for the top); Page is the 1-based page (0: the format has
// none); Anchor the HTML id the block can be linked by. A table's cells
// are in Rows, the first row its header, and Text is the table as text;
// a qa block's Text is "Q: ...\nA: ...".
type Block struct {
	Kind   string
	Level  int
	Text   string
	Page   int
	Anchor string
	Rows   [][]string
}

// Limits bound what Extract reads. A zero field uses the default.
type Limits struct {
	// MaxBytes bounds the input (default 50 MB).
	MaxBytes int64
	// MaxUnpacked bounds what a compressed format (DOCX) unpacks to in
	// all (default 200 MB) and MaxEntries its number of files (default
	// 10,000): a zip bomb is refused, not unpacked.
	MaxUnpacked int64
	MaxEntries  int
}

// Defaults of Limits.
const (
	DefaultMaxBytes    = 50 << 20
	DefaultMaxUnpacked = 200 << 20
	DefaultMaxEntries  = 10_000
)

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxUnpacked <= 0 {
		l.MaxUnpacked = DefaultMaxUnpacked
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	return l
}

// ErrPermanent is wrapped by every error Extract returns: the same
// bytes will fail the same way, so retrying is pointless.
var ErrPermanent = errors.New("cannot be read")

// fail is an error for the uploader, marked permanent.
func fail(format string, args ...any) error {
	return &permanent{msg: fmt.Sprintf(format, args...)}
}

type permanent struct{ msg string }

func (e *permanent) Error() string        { return e.msg }
func (e *permanent) Is(target error) bool { return target == ErrPermanent }

// QAContentType is the content type the API stores a typed qa source's
// pairs as: a JSON array of {"question", "answer"} objects.
const QAContentType = "application/vnd.parley.qa+json"

// Format names the format Extract reads data as: "markdown", "text",
// "html", "csv", "jsonl", "json" (an array of Q&A objects), "docx" or "pdf", from the content type, then
// the file name's extension, then the first bytes; "" when none fits.
func Format(data []byte, filename, contentType string) string {
	ct := strings.ToLower(strings.TrimSpace(strings.SplitN(contentType, ";", 2)[0]))
	switch ct {
	case "text/markdown", "text/x-markdown":
		return "markdown"
	case "text/html", "application/xhtml+xml":
		return "html"
	case "text/csv":
		return "csv"
	case "application/jsonl", "application/x-ndjson", "application/ndjson", "application/x-jsonlines":
		return "jsonl"
	case "application/json", QAContentType:
		return "json"
	case "application/pdf":
		return "pdf"
	case "application/vnd.openxmlformats-officedocument.wordprocessingml.document":
		return "docx"
	}
	switch strings.ToLower(path.Ext(filename)) {
	case ".md", ".markdown", ".mdown":
		return "markdown"
	case ".txt", ".text":
		return "text"
	case ".html", ".htm", ".xhtml":
		return "html"
	case ".csv":
		return "csv"
	case ".jsonl", ".ndjson":
		return "jsonl"
	case ".json":
		return "json"
	case ".pdf":
		return "pdf"
	case ".docx":
		return "docx"
	}
	switch {
	case strings.HasPrefix(string(data), "%PDF-"):
		return "pdf"
	case ct == "text/plain":
		return "text"
	}
	return ""
}

// Extract reads data as the format its content type or file name says
// (see Format) and returns its blocks. Every error says what is wrong in
// words the uploader can act on and wraps ErrPermanent.
func Extract(data []byte, filename, contentType string, lim Limits) (*Document, error) {
	lim = lim.withDefaults()
	if int64(len(data)) > lim.MaxBytes {
		return nil, fail("the file is %d bytes, more than the %d allowed", len(data), lim.MaxBytes)
	}
	format := Format(data, filename, contentType)
	var doc *Document
	var err error
	switch format {
	case "pdf":
		doc, err = pdfText(data)
	case "docx":
		doc, err = docxText(data, lim)
	case "":
		return nil, fail("cannot tell the format of %q (content type %q): upload Markdown, plain text, HTML, CSV or JSON(L) Q&A, DOCX or PDF", filename, contentType)
	default:
		data, err = toUTF8(data, format, contentType)
		if err != nil {
			return nil, err
		}
		if err := checkUTF8(data); err != nil {
			return nil, err
		}
		text := strings.TrimPrefix(string(data), "\ufeff")
		switch format {
		case "markdown":
			doc = markdownText(text)
		case "text":
			doc = plainText(text)
		case "html":
			doc, err = htmlText(text)
		case "csv":
			doc, err = csvQA(text)
		case "jsonl":
			doc, err = jsonlQA(text)
		case "json":
			doc, err = jsonQA(text)
		}
	}
	if err != nil {
		return nil, err
	}
	if len(doc.Blocks) == 0 {
		return nil, fail("no text found in %q", filename)
	}
	return doc, nil
}

var metaCharset = regexp.MustCompile(`(?i)<meta[^>]+charset\s*=\s*["']?([a-z0-9_:.-]+)`)

// toUTF8 converts text whose encoding is declared, by the content
// type's charset or, in HTML, a <meta charset>, to UTF-8. Undeclared
// text must be UTF-8 already: guessing would turn a wrong upload into
// garbled text instead of an error.
func toUTF8(data []byte, format, contentType string) ([]byte, error) {
	if format != "html" {
		// Only the content type declares a charset outside HTML.
		if _, params, err := mime.ParseMediaType(contentType); err != nil || params["charset"] == "" {
			return data, nil
		}
	}
	enc, name, certain := charset.DetermineEncoding(data, contentType)
	if !certain {
		// DetermineEncoding does not tell a <meta> from its guess.
		m := metaCharset.FindSubmatch(data[:min(len(data), 1024)])
		if m == nil {
			return data, nil
		}
		if enc, name = charset.Lookup(string(m[1])); enc == nil {
			return nil, fail("the page declares the unknown encoding %q", m[1])
		}
	}
	if name == "utf-8" {
		return data, nil
	}
	out, err := io.ReadAll(transform.NewReader(bytes.NewReader(data), enc.NewDecoder()))
	if err != nil {
		return nil, fail("the text cannot be read as %s, its declared encoding: %v", name, err)
	}
	return out, nil
}

// checkUTF8 refuses text that is not UTF-8, naming where it stops being.
func checkUTF8(data []byte) error {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return fail("the text is not valid UTF-8 at byte offset %d: save the file as UTF-8 and upload it again", i)
		}
		i += n
	}
	return nil
}
