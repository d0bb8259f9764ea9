// Package extract turns an uploaded document into structured text blocks:
// headings, paragraphs, list items, tables, code and question/answer
// pairs, each with the page or anchor it came from. Markdown, plain
// text, HTML, CSV and JSONL Q&A, DOCX and PDF (its text layer) are
// understood; the input is bounded by Limits and checked to be UTF-8
// text where the format is text. Errors are written for the person who
// uploaded the file; ErrPermanent marks those a retry cannot fix.
//
//	doc, err := extract.Extract(data, "guide.md", "text/markdown", extract.Limits{})
package extract
