package extract

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/ledongthuc/pdf"
)

// pdfText reads the text layer of each page, a paragraph per run of
// lines; a page without one (a scan) is a warning, not an error. The
// PDF library panics on some malformed files: that is a corrupt PDF too.
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
	for i := 1; i <= doc.Pages; i++ {
		p := r.Page(i)
		if p.V.IsNull() {
			doc.Warnings = append(doc.Warnings, fmt.Sprintf("page %d is missing", i))
			continue
		}
		text, err := p.GetPlainText(nil)
		if err != nil {
			doc.Warnings = append(doc.Warnings, fmt.Sprintf("page %d cannot be read: %v", i, err))
			continue
		}
		blocks := plainText(text).Blocks
		if len(blocks) == 0 {
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
