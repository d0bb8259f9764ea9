package extract_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// makePDF writes a minimal PDF with one page per entry of pages, each
// line of a page drawn in Helvetica; an empty page has no text layer.
func makePDF(t *testing.T, pages ...string) []byte {
	t.Helper()
	return buildPDF("", pages...)
}

// makeEncryptedPDF is a PDF locked with a user password (the standard
// security handler, RC4 40-bit): without the password nothing is read.
func makeEncryptedPDF(t *testing.T, pages ...string) []byte {
	t.Helper()
	key := "<" + strings.Repeat("5a", 32) + ">"
	return buildPDF("<< /Filter /Standard /V 1 /R 2 /Length 40 /P -44 /O "+key+" /U <"+strings.Repeat("c3", 32)+"> >>", pages...)
}

// buildPDF lays out pages of text; encrypt, when set, is the trailer's
// /Encrypt dictionary.
func buildPDF(encrypt string, pages ...string) []byte {
	var objs []string
	n := len(pages)
	kids := make([]string, n)
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	objs = append(objs, "<< /Type /Catalog /Pages 2 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	for i, p := range pages {
		var content strings.Builder
		if p != "" {
			content.WriteString("BT /F1 12 Tf 72 720 Td 14 TL\n")
			for _, line := range strings.Split(p, "\n") {
				fmt.Fprintf(&content, "(%s) Tj T*\n", line)
			}
			content.WriteString("ET")
		}
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i),
			fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", content.Len(), content.String()))
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	trailer := ""
	if encrypt != "" {
		objs = append(objs, encrypt)
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(objs), encrypt)
		trailer = fmt.Sprintf(" /Encrypt %d 0 R /ID [<%s> <%s>]", len(objs), strings.Repeat("ab", 16), strings.Repeat("ab", 16))
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, trailer, xref)
	return b.Bytes()
}

// makeDOCX zips files (name to content) into a DOCX.
func makeDOCX(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, content := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(content))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const docxBody = `<?xml version="1.0" encoding="UTF-8"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>
<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Install</w:t></w:r></w:p>
<w:p><w:r><w:t xml:space="preserve">Run the </w:t></w:r><w:r><w:t>installer.</w:t></w:r></w:p>
<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/></w:numPr></w:pPr><w:r><w:t>Step one</w:t></w:r></w:p>
<w:tbl><w:tr><w:tc><w:p><w:r><w:t>OS</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Size</w:t></w:r></w:p></w:tc></w:tr>
<w:tr><w:tc><w:p><w:r><w:t>Linux</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>10 MB</w:t></w:r></w:p></w:tc></w:tr></w:tbl>
</w:body></w:document>`
