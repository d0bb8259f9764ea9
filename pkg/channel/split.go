package channel

import (
	"strings"
	"unicode/utf8"
)

// Split cuts text into parts of at most limit characters (runes), at the
// last line break, else the last space, in each part's second half when
// there is one there, so long replies read naturally across messages.
func Split(text string, limit int) []string {
	var parts []string
	for utf8.RuneCountInString(text) > limit {
		cut := byteOffset(text, limit)
		head := text[:cut]
		if i := strings.LastIndex(head, "\n"); i > cut/2 {
			cut = i + 1
		} else if i := strings.LastIndex(head, " "); i > cut/2 {
			cut = i + 1
		}
		if part := strings.TrimRight(text[:cut], " \n"); part != "" {
			parts = append(parts, part)
		}
		text = strings.TrimLeft(text[cut:], " \n")
	}
	if text = strings.TrimRight(text, " \n"); text != "" || len(parts) == 0 {
		parts = append(parts, text)
	}
	return parts
}

// byteOffset is the byte index after the first n runes of s.
func byteOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}
