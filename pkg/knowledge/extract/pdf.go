package extract

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ledongthuc/pdf"
)

// pdfText reads the text layer of each page, a paragraph per run of
// lines; a page without one (a scan) is a warning, not an error. A line
// set clearly larger than its page's body text is a heading, its level
// by its size among the document's headings (the largest is 1), so
// chunks get heading paths. The PDF library panics on some malformed
// files: that is a corrupt PDF too.
func pdfText(data []byte) (doc *Document, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc, err = nil, fail("the PDF is corrupt and cannot be read (%v): export it again or upload another format", r)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		if errors.Is(err, pdf.ErrInvalidPassword) || strings.Contains(err.Error(), "encrypt") {
			return nil, fail("the PDF is encrypted: remove its password and upload it again")
		}
		return nil, fail("the PDF is corrupt and cannot be read (%v): export it again or upload another format", err)
	}
	doc = &Document{Pages: r.NumPage()}
	if info := r.Trailer().Key("Info"); !info.IsNull() {
		doc.Title = strings.TrimSpace(info.Key("Title").Text())
	}
	pages := make([][]pdfLine, doc.Pages+1)
	read := make([]bool, doc.Pages+1) // a page missing or unreadable was warned of
	var headingSizes []float64
	for i := 1; i <= doc.Pages; i++ {
		p := r.Page(i)
		if p.V.IsNull() {
			doc.Warnings = append(doc.Warnings, fmt.Sprintf("page %d is missing", i))
			continue
		}
		lines, err := pdfLines(p)
		if err != nil {
			doc.Warnings = append(doc.Warnings, fmt.Sprintf("page %d cannot be read: %v", i, err))
			continue
		}
		markHeadings(lines)
		for _, l := range lines {
			if l.heading {
				headingSizes = append(headingSizes, l.size)
			}
		}
		pages[i], read[i] = lines, true
	}
	slices.SortFunc(headingSizes, func(a, b float64) int { return cmp.Compare(b, a) })
	headingSizes = slices.Compact(headingSizes)
	for i := 1; i <= doc.Pages; i++ {
		blocks := pdfBlocks(pages[i], headingSizes)
		if len(blocks) == 0 && read[i] {
			doc.Warnings = append(doc.Warnings, fmt.Sprintf("page %d has no text layer (scanned?)", i))
		}
		for _, b := range blocks {
			b.Page = i
			doc.Blocks = append(doc.Blocks, b)
		}
	}
	if len(doc.Blocks) == 0 && doc.Pages > 0 {
		return nil, fail("the PDF has no text layer on any of its %d pages (scanned?): run it through OCR and upload it again", doc.Pages)
	}
	return doc, nil
}

// pdfLine is a line of a page's text layer and the largest font size
// its visible text is set in.
type pdfLine struct {
	text    string
	size    float64
	heading bool
}

// pdfLines reads a page's text layer as lines, in the order it is drawn:
// a new text object or a move to the next line starts one.
func pdfLines(p pdf.Page) (lines []pdfLine, err error) {
	defer func() {
		if r := recover(); r != nil {
			lines, err = nil, fmt.Errorf("%v", r)
		}
	}()
	contents := p.V.Key("Contents")
	if contents.Kind() == pdf.Null {
		return nil, nil
	}
	fonts := map[string]pdf.Font{}
	for _, name := range p.Fonts() {
		fonts[name] = p.Font(name)
	}
	var (
		enc       pdf.TextEncoding
		fontSize  = 0.0
		scale     = 1.0 // the text matrix's vertical scale
		line      strings.Builder
		lineSize  float64
		finishOne = func() {
			lines = append(lines, pdfLine{text: line.String(), size: lineSize})
			line.Reset()
			lineSize = 0
		}
	)
	show := func(raw string) {
		s := raw
		if enc != nil {
			s = enc.Decode(raw)
		}
		line.WriteString(s)
		if strings.TrimSpace(s) != "" {
			lineSize = max(lineSize, fontSize*scale)
		}
	}
	pdf.Interpret(contents, func(stk *pdf.Stack, op string) {
		args := make([]pdf.Value, stk.Len())
		for i := len(args) - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		switch op {
		case "BT":
			finishOne()
			scale = 1
		case "T*":
			finishOne()
		case "Tf":
			if len(args) == 2 {
				enc = nil
				if f, ok := fonts[args[0].Name()]; ok {
					enc = f.Encoder()
				}
				fontSize = math.Abs(args[1].Float64())
			}
		case "Tm":
			if len(args) == 6 {
				scale = math.Hypot(args[2].Float64(), args[3].Float64())
			}
		case "'", "\"":
			finishOne()
			if len(args) > 0 {
				show(args[len(args)-1].RawString())
			}
		case "Tj":
			if len(args) == 1 {
				show(args[0].RawString())
			}
		case "TJ":
			if len(args) == 1 {
				for i := 0; i < args[0].Len(); i++ {
					if x := args[0].Index(i); x.Kind() == pdf.String {
						show(x.RawString())
					}
				}
			}
		}
	})
	finishOne()
	return lines, nil
}

// markHeadings marks the lines of a page set at least a fifth larger
// than its body text (the size most of its characters are set in), and
// short enough to be a heading.
func markHeadings(lines []pdfLine) {
	chars := map[float64]int{}
	for _, l := range lines {
		chars[l.size] += len(strings.TrimSpace(l.text))
	}
	body, most := 0.0, 0
	for size, n := range chars {
		if n > most || n == most && size < body {
			body, most = size, n
		}
	}
	for i, l := range lines {
		text := strings.Join(strings.Fields(l.text), " ")
		lines[i].heading = body > 0 && l.size >= body*1.2 && text != "" && len(text) <= 200
	}
}

// pdfBlocks turns a page's lines into blocks: each heading line a
// heading, at the level of its size in sizes (the document's heading
// sizes, largest first), and the lines between them paragraphs.
func pdfBlocks(lines []pdfLine, sizes []float64) []Block {
	var out []Block
	var text []string
	flush := func() {
		out = append(out, plainText(strings.Join(text, "\n")).Blocks...)
		text = text[:0]
	}
	for _, l := range lines {
		if !l.heading {
			text = append(text, l.text)
			continue
		}
		flush()
		level := min(slices.Index(sizes, l.size)+1, 6)
		out = append(out, Block{Kind: Heading, Level: level, Text: strings.Join(strings.Fields(l.text), " ")})
	}
	flush()
	return out
}
