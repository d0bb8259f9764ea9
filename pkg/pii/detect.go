package pii

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The kinds of personal data recognised without a pattern.
const (
	KindEmail = "email"
	KindPhone = "phone"
	KindCard  = "card"
	KindIBAN  = "iban"
)

// Kinds lists the built-in kinds, in the order their matches win over
// each other's when they overlap.
var Kinds = []string{KindEmail, KindCard, KindIBAN, KindPhone}

// Pattern is a tenant-defined kind: every match of Regexp is personal data
// of kind Name.
type Pattern struct {
	Name   string
	Regexp *regexp.Regexp
}

// CompilePattern compiles a tenant's pattern. Go's regexp is RE2, whose
// matching time is linear in the text whatever the pattern, so a tenant
// cannot make masking hang.
func CompilePattern(name, expr string) (Pattern, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return Pattern{}, err
	}
	if re.MatchString("") {
		return Pattern{}, fmt.Errorf("the pattern matches empty text")
	}
	return Pattern{Name: name, Regexp: re}, nil
}

// Detector finds the personal data of the kinds it was built for. The zero
// value and nil find nothing. It is safe for concurrent use.
type Detector struct {
	kinds    []string
	patterns []Pattern
}

// New returns a Detector for the given built-in kinds (unknown names are an
// error) and tenant patterns; nil when both are empty.
func New(kinds []string, patterns []Pattern) (*Detector, error) {
	d := &Detector{patterns: patterns}
	for _, k := range Kinds {
		if slices.Contains(kinds, k) {
			d.kinds = append(d.kinds, k)
		}
	}
	for _, k := range kinds {
		if !slices.Contains(Kinds, k) {
			return nil, fmt.Errorf("pii: unknown kind %q", k)
		}
	}
	if len(d.kinds) == 0 && len(patterns) == 0 {
		return nil, nil
	}
	return d, nil
}

// Match is one piece of personal data found in a text.
type Match struct {
	// Kind is a built-in kind or a pattern's name.
	Kind string
	// Start and End are its byte span in the text searched.
	Start, End int
	// Value is the canonical spelling: look-alikes read as ASCII, and a
	// card's or an IBAN's separators removed, so the same number written
	// two ways is one value.
	Value string
}

var (
	emailRe = regexp.MustCompile(`[\p{L}\p{N}._%+\-]+@[\p{L}\p{N}\-]+(?:\.[\p{L}\p{N}\-]+)*\.\p{L}{2,}`)
	// cardRe is 12 to 19 digits with at most one space or dash between any
	// two, so every common grouping (4-4-4-4, Amex's 4-6-5) matches.
	cardRe = regexp.MustCompile(`\b\d(?:[ \-]?\d){11,18}\b`)
	ibanRe = regexp.MustCompile(`\b[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]){11,30}\b`)
	// phoneRe finds candidates; phoneOK decides which are phone numbers.
	phoneRe = regexp.MustCompile(`(?:\+|\b00|\(|\b)\d[\d \-.()/]{5,20}\d\b`)
	nanpRe  = regexp.MustCompile(`^(?:\+?1[ \-.]?)?(?:\(\d{3}\) ?|\d{3}[ \-.])\d{3}[ \-.]\d{4}$`)
)

// Find returns the personal data in s, in text order, without overlaps:
// where two matches overlap, the kind earlier in Kinds wins, then tenant
// patterns in their order.
func (d *Detector) Find(s string) []Match {
	if d == nil || s == "" {
		return nil
	}
	n := normalize(s)
	var out []Match // spans in n.text until the end
	add := func(m Match) {
		for _, o := range out {
			if m.Start < o.End && o.Start < m.End {
				return
			}
		}
		out = append(out, m)
	}
	for _, k := range d.kinds {
		for _, m := range findKind(k, n.text) {
			add(m)
		}
	}
	for _, p := range d.patterns {
		for _, loc := range p.Regexp.FindAllStringIndex(n.text, -1) {
			add(Match{Kind: p.Name, Start: loc[0], End: loc[1], Value: n.text[loc[0]:loc[1]]})
		}
	}
	for i := range out {
		out[i].Start, out[i].End = n.span(out[i].Start, out[i].End)
	}
	slices.SortFunc(out, func(a, b Match) int { return a.Start - b.Start })
	return out
}

func findKind(kind, text string) []Match {
	var out []Match
	switch kind {
	case KindEmail:
		for _, loc := range emailRe.FindAllStringIndex(text, -1) {
			out = append(out, Match{Kind: kind, Start: loc[0], End: loc[1], Value: text[loc[0]:loc[1]]})
		}
	case KindCard:
		for _, loc := range cardRe.FindAllStringIndex(text, -1) {
			if end, digits, ok := cardPrefix(text[loc[0]:loc[1]]); ok {
				out = append(out, Match{Kind: kind, Start: loc[0], End: loc[0] + end, Value: digits})
			}
		}
	case KindIBAN:
		for _, loc := range ibanRe.FindAllStringIndex(text, -1) {
			if end, value, ok := ibanPrefix(text[loc[0]:loc[1]]); ok {
				out = append(out, Match{Kind: kind, Start: loc[0], End: loc[0] + end, Value: value})
			}
		}
	case KindPhone:
		for _, loc := range phoneRe.FindAllStringIndex(text, -1) {
			if phoneOK(text[loc[0]:loc[1]]) {
				out = append(out, Match{Kind: kind, Start: loc[0], End: loc[1], Value: text[loc[0]:loc[1]]})
			}
		}
	}
	return out
}

func onlyDigits(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= '0' && c <= '9' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// cardPrefix finds the longest prefix of the candidate, ending where a
// group of digits ends, that is a card number (13 to 19 digits passing
// Luhn): a card written with its security code after it ("4111 1111 1111
// 1111 123") is a longer run of digits than any card.
func cardPrefix(cand string) (end int, digits string, ok bool) {
	for end = len(cand); end > 0; end-- {
		if end < len(cand) && cand[end] != ' ' && cand[end] != '-' {
			continue
		}
		digits = onlyDigits(cand[:end])
		if len(digits) < 13 {
			return 0, "", false
		}
		if len(digits) <= 19 && luhn(digits) {
			return end, digits, true
		}
	}
	return 0, "", false
}

// luhn reports whether the digits pass the Luhn check every payment card
// number carries.
func luhn(digits string) bool {
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// ibanPrefix finds the longest prefix of the candidate that is a valid
// IBAN (15 to 34 characters passing mod-97): the pattern may have run on
// into a following word ("DE89 3704 ... 00 is mine").
func ibanPrefix(cand string) (end int, value string, ok bool) {
	for end = len(cand); end > 0; end-- {
		if end < len(cand) && cand[end] != ' ' {
			continue // a prefix ends where a group ends
		}
		compact := strings.ToUpper(strings.ReplaceAll(cand[:end], " ", ""))
		if len(compact) < 15 {
			return 0, "", false
		}
		if len(compact) <= 34 && mod97(compact) == 1 {
			return end, compact, true
		}
	}
	return 0, "", false
}

// mod97 is ISO 13616's check: the first four characters moved to the end,
// letters as 10 to 35, the number modulo 97.
func mod97(iban string) int {
	rearranged := iban[4:] + iban[:4]
	rem := 0
	for _, c := range []byte(rearranged) {
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A'+10)) % 97
		default:
			return -1
		}
	}
	return rem
}

// phoneOK says whether a candidate is a phone number: international (+ or
// 00, then 8 to 15 digits, E.164's limit), national with a trunk 0 (9 to
// 11 digits), or a North American number in one of its usual shapes.
// Bare digit runs without a 0 or + are left alone: they are more often
// order numbers than phone numbers.
func phoneOK(cand string) bool {
	digits := onlyDigits(cand)
	switch {
	case strings.HasPrefix(cand, "+"):
		return len(digits) >= 8 && len(digits) <= 15
	case strings.HasPrefix(cand, "00"):
		return len(digits) >= 10 && len(digits) <= 17
	case strings.HasPrefix(cand, "0") || strings.HasPrefix(cand, "(0"):
		return len(digits) >= 9 && len(digits) <= 11
	}
	return nanpRe.MatchString(cand)
}
