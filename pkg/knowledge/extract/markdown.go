package extract

import (
	"regexp"
	"strings"
)

var (
	mdHeading  = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	mdListItem = regexp.MustCompile(`^\s*(?:[-*+]|\d{1,9}[.)])\s+(.*)$`)
	mdSetext   = regexp.MustCompile(`^(=+|-+)$`)
	mdRule     = regexp.MustCompile(`^([-*_]\s*){3,}$`)
	mdBullet   = regexp.MustCompile(`^\s*[-*+]\s+\S`)
	mdTableSep = regexp.MustCompile(`^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$`)
)

// markdownText reads CommonMark's block structure, line by line: ATX
// and setext headings, thematic breaks, fenced code, list items, pipe tables and paragraphs. Inline
// markup is kept as written; it reads fine to a model.
func markdownText(text string) *Document {
	doc := &Document{}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var para []string
	flush := func() {
		if p := strings.TrimSpace(strings.Join(para, " ")); p != "" {
			doc.Blocks = append(doc.Blocks, Block{Kind: Paragraph, Text: p})
		}
		para = nil
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			flush()
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			flush()
			fence := trimmed[:3]
			var code []string
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), fence); i++ {
				code = append(code, lines[i])
			}
			if c := strings.TrimRight(strings.Join(code, "\n"), "\n "); strings.TrimSpace(c) != "" {
				doc.Blocks = append(doc.Blocks, Block{Kind: Code, Text: c})
			}
		case len(para) > 0 && mdSetext.MatchString(trimmed):
			// The paragraph above was a heading underlined.
			text := strings.Join(para, " ")
			para = nil
			level := 1
			if trimmed[0] == '-' {
				level = 2
			}
			doc.Blocks = append(doc.Blocks, Block{Kind: Heading, Level: level, Text: text})
			if doc.Title == "" && level == 1 {
				doc.Title = text
			}
		case mdRule.MatchString(trimmed):
			flush() // a thematic break
		case mdHeading.MatchString(trimmed):
			flush()
			m := mdHeading.FindStringSubmatch(trimmed)
			if m[2] == "" {
				continue
			}
			doc.Blocks = append(doc.Blocks, Block{Kind: Heading, Level: len(m[1]), Text: m[2]})
			if doc.Title == "" && len(m[1]) == 1 {
				doc.Title = m[2]
			}
		case strings.HasPrefix(trimmed, "|") && i+1 < len(lines) && mdTableSep.MatchString(lines[i+1]):
			flush()
			rows := [][]string{tableCells(trimmed)}
			for i += 2; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
				rows = append(rows, tableCells(strings.TrimSpace(lines[i])))
			}
			i--
			doc.Blocks = append(doc.Blocks, tableBlock(rows))
		case mdListItem.MatchString(line) && (len(para) == 0 || mdBullet.MatchString(line) || mdListItem.MatchString(lines[i-1])):
			flush()
			item := mdListItem.FindStringSubmatch(line)[1]
			// Continuation lines, indented, belong to the item.
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "  ") && strings.TrimSpace(lines[i+1]) != "" && !mdListItem.MatchString(lines[i+1]) {
				i++
				item += " " + strings.TrimSpace(lines[i])
			}
			doc.Blocks = append(doc.Blocks, Block{Kind: ListItem, Text: strings.TrimSpace(item)})
		default:
			para = append(para, trimmed)
		}
	}
	flush()
	return doc
}

// tableCells splits one pipe-table row.
func tableCells(row string) []string {
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	cells := strings.Split(row, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

// tableBlock makes a table block of rows, its Text a row a line.
func tableBlock(rows [][]string) Block {
	return Block{Kind: Table, Text: TableText(rows), Rows: rows}
}

// TableText writes rows as text, cells joined by " | ", a row a line.
func TableText(rows [][]string) string {
	lines := make([]string, len(rows))
	for i, r := range rows {
		lines[i] = strings.Join(r, " | ")
	}
	return strings.Join(lines, "\n")
}

// plainText makes a paragraph of each run of non-blank lines.
func plainText(text string) *Document {
	doc := &Document{}
	for _, p := range regexp.MustCompile(`\n\s*\n`).Split(strings.ReplaceAll(text, "\r\n", "\n"), -1) {
		if p = strings.Join(strings.Fields(p), " "); p != "" {
			doc.Blocks = append(doc.Blocks, Block{Kind: Paragraph, Text: p})
		}
	}
	return doc
}
