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
	cardRe   = regexp.MustCompile(`\b\d(?:[ \-]?\d){11,18}\b`)
	ibanAtRe = regexp.MustCompile(`^[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]){11,30}\b`)
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

// findKind finds one kind in text. Go's regexp tries every position of
// a text its pattern has no literal to start from, so each kind first
// cuts the few spans that could hold one (a run with an '@', a run of
// digits and separators, two letters and two digits) and matches only
// there: ordinary prose costs a scan, not a regexp.
func findKind(kind, text string) []Match {
	var out []Match
	switch kind {
	case KindEmail:
		for _, r := range runs(text, isEmailByte, func(run string) bool { return strings.IndexByte(run, '@') > 0 }) {
			for _, loc := range emailRe.FindAllStringIndex(text[r[0]:r[1]], -1) {
				s, e := r[0]+loc[0], r[0]+loc[1]
				out = append(out, Match{Kind: kind, Start: s, End: e, Value: text[s:e]})
			}
		}
	case KindCard:
		for _, r := range runs(text, isNumberByte, func(run string) bool { return countDigits(run) >= 13 }) {
			for _, loc := range cardRe.FindAllStringIndex(text[r[0]:r[1]], -1) {
				s := r[0] + loc[0]
				if end, digits, ok := cardPrefix(text[s : r[0]+loc[1]]); ok {
					out = append(out, Match{Kind: kind, Start: s, End: s + end, Value: digits})
				}
			}
		}
	case KindIBAN:
		for i := 0; i+4 <= len(text); i++ {
			if !ibanStart(text, i) {
				continue
			}
			window := text[i:min(len(text), i+4+2*30)]
			if loc := ibanAtRe.FindStringIndex(window); loc != nil {
				if end, value, ok := ibanPrefix(window[:loc[1]]); ok {
					out = append(out, Match{Kind: kind, Start: i, End: i + end, Value: value})
					i += end - 1
				}
			}
		}
	case KindPhone:
		for _, r := range runs(text, isNumberByte, func(run string) bool { return countDigits(run) >= 7 }) {
			for _, loc := range phoneRe.FindAllStringIndex(text[r[0]:r[1]], -1) {
				s, e := r[0]+loc[0], r[0]+loc[1]
				if phoneOK(text[s:e]) {
					out = append(out, Match{Kind: kind, Start: s, End: e, Value: text[s:e]})
				}
			}
		}
	}
	return out
}

// runs returns the spans of text made of bytes in, that keep says may
// hold a match.
func runs(text string, in func(byte) bool, keep func(string) bool) [][2]int {
	var out [][2]int
	for i := 0; i < len(text); {
		if !in(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && in(text[j]) {
			j++
		}
		if keep(text[i:j]) {
			out = append(out, [2]int{i, j})
		}
		i = j
	}
	return out
}

// isEmailByte is a byte an address may hold: emailRe's classes, and every
// byte of a non-ASCII letter.
func isEmailByte(c byte) bool {
	return c >= 0x80 || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._%+-@", c) >= 0
}

// isNumberByte is a byte a card or phone number may hold.
func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || strings.IndexByte(" -.()/+", c) >= 0
}

func countDigits(s string) int {
	n := 0
	for _, c := range []byte(s) {
		if c >= '0' && c <= '9' {
			n++
		}
	}
	return n
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// ibanStart says an IBAN may start at i: two letters and two digits, at
// the start of a word.
func ibanStart(text string, i int) bool {
	if i > 0 && (isLetter(text[i-1]) || isDigit(text[i-1])) {
		return false
	}
	return isLetter(text[i]) && isLetter(text[i+1]) && isDigit(text[i+2]) && isDigit(text[i+3])
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
