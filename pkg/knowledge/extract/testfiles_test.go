package extract_test

import (
	"archive/zip"
	"bytes"
	"testing"
)

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
