// Package extracttest builds documents for the tests and benchmarks of
// the knowledge packages, so each does not carry its own writer.
package extracttest

import (
	"bytes"
	"fmt"
	"strings"
)

// PDF writes a minimal PDF with one page per entry of pages, each line
// of a page drawn in Helvetica; an empty page has no text layer. Lines
// must not hold parentheses or backslashes, which PDF strings escape.
func PDF(pages ...string) []byte { return build("", inBodySize(pages)...) }

// Line is a line of a page of SizedPDF: its text and its font size in
// points.
type Line struct {
	Text string
	Size float64
}

// BodySize is the font size PDF sets its lines in.
const BodySize = 12

// SizedPDF writes a PDF like PDF whose lines are set in their own font
// sizes, each line a text object of its own (as word processors write
// them), so headings can be told from body text by their size.
func SizedPDF(pages ...[]Line) []byte { return build("", pages...) }

func inBodySize(pages []string) [][]Line {
	out := make([][]Line, len(pages))
	for i, p := range pages {
		if p == "" {
			continue
		}
		for _, text := range strings.Split(p, "\n") {
			out[i] = append(out[i], Line{Text: text, Size: BodySize})
		}
	}
	return out
}

// EncryptedPDF is a PDF locked with a user password (the standard
// security handler, RC4 40-bit): without the password nothing is read.
func EncryptedPDF(pages ...string) []byte {
	key := "<" + strings.Repeat("5a", 32) + ">"
	return build("<< /Filter /Standard /V 1 /R 2 /Length 40 /P -44 /O "+key+" /U <"+strings.Repeat("c3", 32)+"> >>", inBodySize(pages)...)
}

// build lays out pages of text; encrypt, when set, is the trailer's
// /Encrypt dictionary.
func build(encrypt string, pages ...[]Line) []byte {
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
		y := 720.0
		for j, line := range p {
			// Lines of the body size run on in one text object, as PDF
			// always wrote them; another size starts one of its own.
			if j == 0 || line.Size != p[j-1].Size || line.Size != BodySize {
				if j > 0 {
					content.WriteString("ET\n")
				}
				fmt.Fprintf(&content, "BT /F1 %g Tf 72 %g Td %g TL\n", line.Size, y, line.Size+2)
			}
			fmt.Fprintf(&content, "(%s) Tj T*\n", line.Text)
			y -= line.Size + 2
		}
		if len(p) > 0 {
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
