package extract

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"
)

// docxText reads the paragraphs, headings, list items and tables of a
// Word document's word/document.xml. The archive is checked before
// anything is unpacked: too many entries, or entries that claim or turn
// out to unpack to more than the limits allow, are refused.
func docxText(data []byte, lim Limits) (*Document, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fail("the DOCX file is not a valid Word document (%v): save it again from Word or upload a PDF", err)
	}
	if len(zr.File) > lim.MaxEntries {
		return nil, fail("the DOCX file holds %d files, more than the %d allowed", len(zr.File), lim.MaxEntries)
	}
	var total uint64
	var body *zip.File
	for _, f := range zr.File {
		total += f.UncompressedSize64
		if f.Name == "word/document.xml" {
			body = f
		}
	}
	if total > uint64(lim.MaxUnpacked) {
		return nil, fail("the DOCX file unpacks to %d bytes, more than the %d allowed", total, lim.MaxUnpacked)
	}
	if body == nil {
		return nil, fail("the file is a zip archive but not a Word document (no word/document.xml)")
	}
	rc, err := body.Open()
	if err != nil {
		return nil, fail("the DOCX file is corrupt: %v", err)
	}
	defer rc.Close()
	// The sizes in the archive may lie: read no more than they claimed.
	xmlData, err := io.ReadAll(io.LimitReader(rc, int64(body.UncompressedSize64)+1))
	if errors.Is(err, zip.ErrFormat) || errors.Is(err, zip.ErrChecksum) {
		// archive/zip stops reading an entry at its declared size too.
		return nil, fail("the DOCX file is corrupt: word/document.xml unpacks to more than it declares, or not to what it declares")
	}
	if err != nil {
		return nil, fail("the DOCX file is corrupt: %v", err)
	}
	if uint64(len(xmlData)) > body.UncompressedSize64 {
		return nil, fail("the DOCX file is corrupt: word/document.xml unpacks to more than it declares")
	}
	return docxBody(xmlData)
}

// docxBody walks document.xml: w:p paragraphs (their w:pStyle says a
// heading, w:numPr a list item) and w:tbl tables.
func docxBody(data []byte) (*Document, error) {
	doc := &Document{}
	dec := xml.NewDecoder(bytes.NewReader(data))
	var (
		text   strings.Builder
		style  string
		list   bool
		depth  int // table nesting
		row    []string
		rows   [][]string
		inCell bool
		cell   strings.Builder
		inText bool
	)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fail("the DOCX file is corrupt: word/document.xml: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "tbl":
				depth++
				if depth == 1 {
					rows = nil
				}
			case "tr":
				if depth == 1 {
					row = nil
				}
			case "tc":
				if depth == 1 {
					inCell = true
					cell.Reset()
				}
			case "p":
				text.Reset()
				style, list = "", false
			case "pStyle":
				style = xmlAttr(t, "val")
			case "numPr":
				list = true
			case "t":
				inText = true
			case "tab":
				text.WriteString(" ")
			case "br":
				text.WriteString(" ")
			}
		case xml.CharData:
			if inText {
				text.Write(t)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				p := collapse(text.String())
				if inCell {
					if cell.Len() > 0 && p != "" {
						cell.WriteString(" ")
					}
					cell.WriteString(p)
					continue
				}
				if depth > 0 || p == "" {
					continue
				}
				switch level := headingLevel(style); {
				case level > 0:
					doc.Blocks = append(doc.Blocks, Block{Kind: Heading, Level: level, Text: p})
					if doc.Title == "" && level == 1 {
						doc.Title = p
					}
				case strings.EqualFold(style, "Title"):
					doc.Title = p
					doc.Blocks = append(doc.Blocks, Block{Kind: Heading, Level: 1, Text: p})
				case list || strings.HasPrefix(strings.ToLower(style), "list"):
					doc.Blocks = append(doc.Blocks, Block{Kind: ListItem, Text: p})
				default:
					doc.Blocks = append(doc.Blocks, Block{Kind: Paragraph, Text: p})
				}
			case "tc":
				if depth == 1 {
					inCell = false
					row = append(row, cell.String())
				}
			case "tr":
				if depth == 1 && len(row) > 0 {
					rows = append(rows, row)
				}
			case "tbl":
				depth--
				if depth == 0 && len(rows) > 0 {
					doc.Blocks = append(doc.Blocks, tableBlock(rows))
				}
			}
		}
	}
	return doc, nil
}

// headingLevel reads Word's built-in heading styles, "Heading1".."Heading9".
func headingLevel(style string) int {
	s := strings.ToLower(strings.ReplaceAll(style, " ", ""))
	if !strings.HasPrefix(s, "heading") {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimPrefix(s, "heading"))
	if err != nil || n < 1 || n > 9 {
		return 0
	}
	return n
}

func xmlAttr(e xml.StartElement, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}
