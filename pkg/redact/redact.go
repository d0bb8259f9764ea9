package redact

import (
	"encoding/base64"
	"encoding/hex"
	"html"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Mask replaces every secret found.
const Mask = "[redacted]"

// MinBase64Len is the shortest base64 run looked for: a shorter one would
// match ordinary text by chance.
const MinBase64Len = 6

// Redactor scrubs a fixed set of secret values from text. The zero value
// and nil scrub nothing. It is safe for concurrent use.
type Redactor struct {
	// forms are the byte strings to find, longest first: each secret, and
	// its base64 runs and hex spellings. Each is found however its
	// characters are escaped (see matchAt).
	forms []string
	// starts marks the bytes a spelling of some form can begin with.
	starts [256]bool
}

// New returns a Redactor for secrets; empty values are ignored.
func New(secrets ...string) *Redactor {
	var forms []string
	for _, s := range secrets {
		if s == "" {
			continue
		}
		forms = append(forms, s, hex.EncodeToString([]byte(s)), strings.ToUpper(hex.EncodeToString([]byte(s))))
		// The whole secret encoded alone, padding and edge characters
		// included; then the runs that find it inside a longer value.
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if full := enc.EncodeToString([]byte(s)); len(full) >= MinBase64Len {
				forms = append(forms, full)
			}
		}
		for _, run := range base64Runs(s) {
			if len(run) >= MinBase64Len {
				forms = append(forms, run)
			}
		}
	}
	if len(forms) == 0 {
		return nil
	}
	// Longest first, so a secret that contains another is scrubbed whole.
	slices.SortStableFunc(forms, func(a, b string) int { return len(b) - len(a) })
	r := &Redactor{forms: slices.Compact(forms)}
	for _, c := range []byte{'\\', '%', '&', '+'} {
		r.starts[c] = true
	}
	for _, f := range r.forms {
		r.starts[f[0]] = true
	}
	return r
}

// base64Runs are the base64 characters that encode s wherever it sits in
// a longer encoded text (a Basic auth "user:secret", a JSON blob): one run
// per alignment of s within the 3-byte groups, in the standard and the
// URL-safe alphabet, without the edge characters that mix in neighbouring
// bytes. Padding never falls inside a run, so padded and raw encodings
// match alike.
func base64Runs(s string) []string {
	var runs []string
	for k := range 3 {
		enc := base64.RawStdEncoding.EncodeToString(append(make([]byte, k), s...))
		first := (8*k + 5) / 6         // first character made of s's bits only
		last := (8 * (k + len(s))) / 6 // one past the last such character
		if last <= first || last > len(enc) {
			continue
		}
		run := enc[first:last]
		runs = append(runs, run, strings.NewReplacer("+", "-", "/", "_").Replace(run))
	}
	return runs
}

// Redact returns s with every secret replaced by Mask, in each form a
// server may echo it: as is; with any of its characters JSON-escaped
// (\/, \", \uXXXX in either case, surrogate pairs), percent-encoded (either
// case, + for a space) or written as an HTML entity (named, decimal or hex),
// mixed freely; base64 (standard or URL-safe, padded or not, alone or
// inside a longer encoded value such as Basic auth's user:secret, its
// characters escaped as above, e.g. PHP's \/); and hex in either case.
func (r *Redactor) Redact(s string) string {
	if r == nil || len(r.forms) == 0 || s == "" {
		return s
	}
	var b strings.Builder
	var m matcher
	changed := false
	for i := 0; i < len(s); {
		if end := r.matchAny(&m, s, i); end > i {
			if !changed {
				b.Grow(len(s))
				b.WriteString(s[:i])
				changed = true
			}
			b.WriteString(Mask)
			i = end
			continue
		}
		if changed {
			b.WriteByte(s[i])
		}
		i++
	}
	if !changed {
		return s
	}
	return b.String()
}

// matchAny returns the end of the longest form spelled at s[i:], or i.
func (r *Redactor) matchAny(m *matcher, s string, i int) int {
	if !r.starts[s[i]] {
		return i
	}
	best := i
	for _, f := range r.forms {
		if end := m.matchAt(s, i, f); end > best {
			best = end
		}
	}
	return best
}

// state is a position in the text and in the form being matched.
type state struct{ p, j int }

// matcher holds the scratch space of one Redact call, reused by every
// attempt so the common case allocates nothing.
type matcher struct {
	stack []state
	seen  map[state]bool
}

// matchAt returns the end of the longest spelling of want at s[i:], or -1.
// Each character of want may appear as itself or in one of the escapes
// decode knows; an escape can also stand for a literal character (a "%"
// of want may be "%" or "%25"), so every reading is followed, once per
// (position in s, position in want).
func (m *matcher) matchAt(s string, i int, want string) int {
	m.stack = m.stack[:0]
	var units [2]unit
	for _, u := range decode(s, i, units[:0]) {
		if strings.HasPrefix(want, u.bytes) {
			m.stack = append(m.stack, state{i + u.n, len(u.bytes)})
		}
	}
	if len(m.stack) == 0 { // the usual case
		return -1
	}
	if m.seen == nil {
		m.seen = map[state]bool{}
	}
	clear(m.seen)
	best := -1
	for len(m.stack) > 0 {
		st := m.stack[len(m.stack)-1]
		m.stack = m.stack[:len(m.stack)-1]
		if st.j == len(want) {
			best = max(best, st.p)
			continue
		}
		if m.seen[st] || st.p >= len(s) {
			continue
		}
		m.seen[st] = true
		for _, u := range decode(s, st.p, units[:0]) {
			if strings.HasPrefix(want[st.j:], u.bytes) {
				m.stack = append(m.stack, state{st.p + u.n, st.j + len(u.bytes)})
			}
		}
	}
	return best
}

// unit is one reading of the text at a position: the bytes it stands for
// and how many bytes of text it takes.
type unit struct {
	bytes string
	n     int
}

// decode appends to out the readings of s at p: the byte itself, and the
// escape that starts there, if any.
func decode(s string, p int, out []unit) []unit {
	out = append(out, unit{s[p : p+1], 1})
	switch s[p] {
	case '\\':
		if u, ok := jsonEscape(s, p); ok {
			out = append(out, u)
		}
	case '%':
		if p+2 < len(s) && isHex(s[p+1]) && isHex(s[p+2]) {
			out = append(out, unit{string([]byte{unhex(s[p+1])<<4 | unhex(s[p+2])}), 3})
		}
	case '+':
		out = append(out, unit{" ", 1})
	case '&':
		if u, ok := htmlEntity(s, p); ok {
			out = append(out, u)
		}
	}
	return out
}

// jsonEscape reads a JSON (or JavaScript) string escape at s[p].
func jsonEscape(s string, p int) (unit, bool) {
	if p+1 >= len(s) {
		return unit{}, false
	}
	switch c := s[p+1]; c {
	case '/', '\\', '"', '\'':
		return unit{string(c), 2}, true
	case 'b':
		return unit{"\b", 2}, true
	case 'f':
		return unit{"\f", 2}, true
	case 'n':
		return unit{"\n", 2}, true
	case 'r':
		return unit{"\r", 2}, true
	case 't':
		return unit{"\t", 2}, true
	case 'u':
	default:
		return unit{}, false
	}
	r1, ok := hex4(s, p+2)
	if !ok {
		return unit{}, false
	}
	if utf16.IsSurrogate(r1) && p+11 < len(s) && s[p+6] == '\\' && s[p+7] == 'u' {
		if r2, ok := hex4(s, p+8); ok {
			if r := utf16.DecodeRune(r1, r2); r != utf8.RuneError {
				return unit{string(r), 12}, true
			}
		}
	}
	return unit{string(r1), 6}, true
}

func hex4(s string, p int) (rune, bool) {
	if p+4 > len(s) {
		return 0, false
	}
	var r rune
	for k := range 4 {
		if !isHex(s[p+k]) {
			return 0, false
		}
		r = r<<4 | rune(unhex(s[p+k]))
	}
	return r, true
}

// maxEntity bounds how far an HTML entity's ";" is looked for.
const maxEntity = 34

// htmlEntity reads a named, decimal or hex character reference at s[p],
// which must end in ";".
func htmlEntity(s string, p int) (unit, bool) {
	end := strings.IndexByte(s[p+1:min(len(s), p+maxEntity)], ';')
	if end < 1 {
		return unit{}, false
	}
	ref := s[p : p+end+2]
	dec := html.UnescapeString(ref)
	if dec == ref {
		return unit{}, false
	}
	return unit{dec, len(ref)}, true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
