package pii

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// normalized is a text with look-alike characters replaced by their ASCII
// forms, and the way back: from[i] and to[i] are the original byte span
// that produced byte i of text.
type normalized struct {
	text     string
	from, to []int
}

// normalize reads digits of every script as ASCII digits, fullwidth ASCII
// as ASCII, Unicode dashes as '-' and Unicode spaces as ' ', so that a
// look-alike spelling of a card or phone number matches like the plain one.
func normalize(s string) normalized {
	var b strings.Builder
	b.Grow(len(s))
	n := normalized{from: make([]int, 0, len(s)), to: make([]int, 0, len(s))}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if a, ok := asciiLookAlike(r); ok {
			b.WriteByte(a)
			n.from, n.to = append(n.from, i), append(n.to, i+size)
		} else {
			for k := range size {
				b.WriteByte(s[i+k])
				n.from, n.to = append(n.from, i), append(n.to, i+size)
			}
		}
		i += size
	}
	n.text = b.String()
	return n
}

// span maps the normalized text's byte span [start, end) back to s.
func (n normalized) span(start, end int) (int, int) {
	return n.from[start], n.to[end-1]
}

// asciiLookAlike is the ASCII character r stands for, when r is not ASCII
// but reads as one: a decimal digit of another script, a fullwidth form,
// a dash or a space.
func asciiLookAlike(r rune) (byte, bool) {
	switch {
	case r < utf8.RuneSelf:
		return 0, false
	case r >= 0xFF01 && r <= 0xFF5E: // fullwidth ASCII
		return byte(r - 0xFEE0), true
	case unicode.Is(unicode.Nd, r):
		return '0' + digitValue(r), true
	case r == 0x2212 || (r >= 0x2010 && r <= 0x2015) || r == 0xFE63:
		return '-', true
	case unicode.Is(unicode.Zs, r):
		return ' ', true
	}
	return 0, false
}

// digitValue is the value of the decimal digit r. Unicode puts every
// script's digits in runs of ten from zero, so the value is r's distance
// from the start of its run, modulo ten.
func digitValue(r rune) byte {
	for _, rg := range unicode.Nd.R16 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return byte((r - rune(rg.Lo)) % 10)
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return byte((r - rune(rg.Lo)) % 10)
		}
	}
	return 0
}
