package extract_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/knowledge/chunk"
	"github.com/parleyhq/parley/pkg/knowledge/extract"
	"github.com/parleyhq/parley/pkg/knowledge/extract/extracttest"
)

type block struct {
	Kind, Text  string
	Level, Page int
	Anchor      string
}

func blocks(doc *extract.Document) []block {
	var out []block
	for _, b := range doc.Blocks {
		out = append(out, block{b.Kind, b.Text, b.Level, b.Page, b.Anchor})
	}
	return out
}

func TestExtract(t *testing.T) {
	tests := []struct {
		name, file, ct, in string
		title              string
		want               []block
	}{
		{"markdown keeps headings, lists, tables and code", "a.md", "", "# Guide\n\nIntro line one\nline two.\n\n## Install\n\n- first\n- second\n  more\n\n| OS | Size |\n|---|---|\n| Linux | 10 |\n\n```\ngo run .\n```\n",
			"Guide", []block{{"heading", "Guide", 1, 0, ""}, {"paragraph", "Intro line one line two.", 0, 0, ""}, {"heading", "Install", 2, 0, ""},
				{"list_item", "first", 0, 0, ""}, {"list_item", "second more", 0, 0, ""}, {"table", "OS | Size\nLinux | 10", 0, 0, ""}, {"code", "go run .", 0, 0, ""}}},
		{"markdown underlined headings, rules, and a list right after a paragraph", "a.md", "", "Title\n=====\n\nSee:\n- one\n\n***\n\nPart\n----\ntext",
			"Title", []block{{"heading", "Title", 1, 0, ""}, {"paragraph", "See:", 0, 0, ""}, {"list_item", "one", 0, 0, ""}, {"heading", "Part", 2, 0, ""}, {"paragraph", "text", 0, 0, ""}}},
		{"plain text is a paragraph per run of lines", "a.txt", "", "one\ntwo\n\n\nthree", "",
			[]block{{"paragraph", "one two", 0, 0, ""}, {"paragraph", "three", 0, 0, ""}}},
		{"html drops scripts, navigation and footers and keeps anchors", "a.html", "",
			`<html><head><title>Docs</title><style>p{}</style></head><body><nav>Home | About</nav><h1>Guide</h1><script>x()</script><p>Hello <b>world</b>.</p><section id="linux"><h2>Linux</h2><ul><li>apt</li><li>dnf</li></ul><table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table></section><footer>(c) us</footer></body></html>`,
			"Docs", []block{{"heading", "Guide", 1, 0, ""}, {"paragraph", "Hello world.", 0, 0, ""}, {"heading", "Linux", 2, 0, "linux"},
				{"list_item", "apt", 0, 0, "linux"}, {"list_item", "dnf", 0, 0, "linux"}, {"table", "A | B\n1 | 2", 0, 0, "linux"}}},
		{"csv of questions and answers is a qa block a row", "faq.csv", "text/csv", "Question,Answer\nHow old?,Ten\n\"Where, then?\",Here\n", "",
			[]block{{"qa", "Q: How old?\nA: Ten", 0, 0, ""}, {"qa", "Q: Where, then?\nA: Here", 0, 0, ""}}},
		{"jsonl of questions and answers is a qa block a line", "faq.jsonl", "", `{"question":"Why?","answer":"Because."}` + "\n\n" + `{"question":"How?","answer":"So."}`, "",
			[]block{{"qa", "Q: Why?\nA: Because.", 0, 0, ""}, {"qa", "Q: How?\nA: So.", 0, 0, ""}}},
		{"a JSON array of questions and answers, as the API stores typed pairs", "", extract.QAContentType, `[{"question":"Why?","answer":"Because."}]`, "",
			[]block{{"qa", "Q: Why?\nA: Because.", 0, 0, ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := extract.Extract([]byte(tt.in), tt.file, tt.ct, extract.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if got := blocks(doc); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("blocks:\n got %+v\nwant %+v", got, tt.want)
			}
			if doc.Title != tt.title {
				t.Errorf("title %q, want %q", doc.Title, tt.title)
			}
		})
	}
}

func TestExtractDOCX(t *testing.T) {
	t.Run("a Word document gives headings, paragraphs, list items and tables", func(t *testing.T) {
		data := makeDOCX(t, map[string]string{"word/document.xml": docxBody})
		doc, err := extract.Extract(data, "a.docx", "", extract.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		want := []block{{"heading", "Install", 1, 0, ""}, {"paragraph", "Run the installer.", 0, 0, ""}, {"list_item", "Step one", 0, 0, ""}, {"table", "OS | Size\nLinux | 10 MB", 0, 0, ""}}
		if got := blocks(doc); !reflect.DeepEqual(got, want) {
			t.Errorf("blocks:\n got %+v\nwant %+v", got, want)
		}
	})
	t.Run("a zip bomb is refused before it is unpacked", func(t *testing.T) {
		data := makeDOCX(t, map[string]string{"word/document.xml": docxBody, "big.bin": strings.Repeat("0", 1<<20)})
		_, err := extract.Extract(data, "a.docx", "", extract.Limits{MaxUnpacked: 1 << 19})
		if !errors.Is(err, extract.ErrPermanent) || !strings.Contains(err.Error(), "unpacks to") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("too many entries are refused", func(t *testing.T) {
		data := makeDOCX(t, map[string]string{"word/document.xml": docxBody, "a": "", "b": ""})
		if _, err := extract.Extract(data, "a.docx", "", extract.Limits{MaxEntries: 2}); err == nil || !strings.Contains(err.Error(), "holds 3 files") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestExtractPDF(t *testing.T) {
	t.Run("each page's text carries its page and a page without text is a warning", func(t *testing.T) {
		doc, err := extract.Extract(extracttest.PDF("Hello page one", "", "Third page"), "a.pdf", "application/pdf", extract.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if doc.Pages != 3 {
			t.Errorf("pages = %d", doc.Pages)
		}
		got := blocks(doc)
		if len(got) != 2 || got[0].Page != 1 || !strings.Contains(got[0].Text, "Hello page one") || got[1].Page != 3 {
			t.Errorf("blocks = %+v", got)
		}
		if want := []string{"page 2 has no text layer (scanned?)"}; !reflect.DeepEqual(doc.Warnings, want) {
			t.Errorf("warnings = %q", doc.Warnings)
		}
	})
	t.Run("lines set larger than the body text are headings, so chunks get heading paths", func(t *testing.T) {
		body := func(text string) extracttest.Line { return extracttest.Line{Text: text, Size: extracttest.BodySize} }
		data := extracttest.SizedPDF(
			[]extracttest.Line{{Text: "Tent care", Size: 24}, {Text: "Poles", Size: 16},
				body("Splint a broken pole with the aluminium sleeve."), body("Never bend it back."),
				{Text: "Fabric", Size: 16}, body("Seal a leaking seam with the repair tape.")},
			[]extracttest.Line{body("Dry the tent before you pack it.")},
			[]extracttest.Line{{Text: "Stoves", Size: 24}, body("Clean the burner jets after every trip.")})
		doc, err := extract.Extract(data, "guide.pdf", "application/pdf", extract.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		want := []block{
			{"heading", "Tent care", 1, 1, ""}, {"heading", "Poles", 2, 1, ""},
			{"paragraph", "Splint a broken pole with the aluminium sleeve. Never bend it back.", 0, 1, ""},
			{"heading", "Fabric", 2, 1, ""}, {"paragraph", "Seal a leaking seam with the repair tape.", 0, 1, ""},
			{"paragraph", "Dry the tent before you pack it.", 0, 2, ""},
			{"heading", "Stoves", 1, 3, ""}, {"paragraph", "Clean the burner jets after every trip.", 0, 3, ""},
		}
		if got := blocks(doc); !reflect.DeepEqual(got, want) {
			t.Fatalf("blocks:\n got %+v\nwant %+v", got, want)
		}
		var locators []string
		for _, c := range chunk.Split(doc, chunk.Options{}) {
			locators = append(locators, c.Title+" | "+c.Locator)
		}
		if want := []string{"Poles | Tent care > Poles, p. 1", "Fabric | Tent care > Fabric, pp. 1-2", "Stoves | Stoves, p. 3"}; !reflect.DeepEqual(locators, want) {
			t.Errorf("chunks' titles and locators %q, want %q", locators, want)
		}
	})
	t.Run("a page set in one size has no headings", func(t *testing.T) {
		doc, err := extract.Extract(extracttest.SizedPDF([]extracttest.Line{{Text: "Large print", Size: 20}, {Text: "All of it", Size: 20}}), "a.pdf", "", extract.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range doc.Blocks {
			if b.Kind != extract.Paragraph {
				t.Errorf("blocks = %+v, want paragraphs only", blocks(doc))
			}
		}
	})
	t.Run("a password-protected PDF is a permanent error asking for it unlocked", func(t *testing.T) {
		_, err := extract.Extract(extracttest.EncryptedPDF("Secret plans"), "locked.pdf", "application/pdf", extract.Limits{})
		if !errors.Is(err, extract.ErrPermanent) || !strings.Contains(err.Error(), "the PDF is encrypted: remove its password") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a corrupt PDF is a permanent error saying so", func(t *testing.T) {
		data := extracttest.PDF("Hello")
		_, err := extract.Extract(data[:len(data)/2], "a.pdf", "", extract.Limits{})
		if !errors.Is(err, extract.ErrPermanent) || !strings.Contains(err.Error(), "PDF is corrupt") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestExtractDeclaredCharsets(t *testing.T) {
	tests := []struct{ name, ct, in string }{
		{"a content type's charset is honoured", "text/plain; charset=iso-8859-1", "caf\xe9"},
		{"an HTML meta charset is honoured", "text/html", "<meta charset=\"windows-1252\"><p>caf\xe9</p>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := extract.Extract([]byte(tt.in), "", tt.ct, extract.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if got := doc.Blocks[0].Text; got != "café" {
				t.Fatalf("text %q", got)
			}
		})
	}
}

func TestExtractRefuses(t *testing.T) {
	tests := []struct {
		name, file, in string
		lim            extract.Limits
		want           string
	}{
		{"invalid UTF-8 names the byte offset", "a.txt", "héllo\xffx", extract.Limits{}, "not valid UTF-8 at byte offset 6"},
		{"an HTML page that declares no encoding must be UTF-8", "a.html", "<p>caf\xe9</p>", extract.Limits{}, "not valid UTF-8 at byte offset 6"},
		{"an input over the size limit", "a.txt", "hello world", extract.Limits{MaxBytes: 5}, "more than the 5 allowed"},
		{"an unknown format", "a.bin", "xx", extract.Limits{}, "cannot tell the format"},
		{"a CSV without question and answer columns", "a.csv", "a,b\n", extract.Limits{}, `must name a "question"`},
		{"a JSONL line that is not an object", "a.jsonl", "{\"question\":\"q\",\"answer\":\"a\"}\n[1]\n", extract.Limits{}, "JSONL line 2"},
		{"a document with no text", "a.md", "\n\n", extract.Limits{}, "no text found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := extract.Extract([]byte(tt.in), tt.file, "", tt.lim)
			if !errors.Is(err, extract.ErrPermanent) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to say %q", err, tt.want)
			}
		})
	}
}
