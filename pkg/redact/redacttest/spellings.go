// Package redacttest lists the ways a server may echo a secret back, for
// the tests of every package that must scrub them (pkg/redact and the
// tools that use it): one table, so each covers the same encodings; and
// Logs, a sink a test reads to see whether a secret reached the logs.
package redacttest

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"strings"
	"unicode/utf16"
)

// Spelling is a secret as some server writes it.
type Spelling struct {
	Name string
	Text string
}

// Spellings returns secret in every encoding Redact must see through. Each
// Text stands for the whole secret.
func Spellings(secret string) []Spelling {
	b := []byte(secret)
	std := base64.StdEncoding.EncodeToString(b)
	return []Spelling{
		{"as is", secret},
		{"JSON as Go writes it (\\u0026, \\u003c)", jsonGo(secret)},
		{"JSON without HTML escaping", jsonNoHTML(secret)},
		{"JSON as PHP writes it (\\/ and \\u00e9)", JSONLike(secret, true, false)},
		{"JSON as Python writes it (\\u00e9, / left alone)", JSONLike(secret, false, false)},
		{"JSON with upper-case hex (\\u00E9)", JSONLike(secret, true, true)},
		{"every character as \\uXXXX in lower case", each(secret, func(r rune, _ int) string { return UEscape(r, false) })},
		{"every character as \\uXXXX in upper case", each(secret, func(r rune, _ int) string { return UEscape(r, true) })},
		{"\\uXXXX escapes mixed with bare characters, both cases", each(secret, func(r rune, i int) string {
			if i%2 == 0 {
				return string(r)
			}
			return UEscape(r, i%4 == 1)
		})},
		{"query-escaped (+ for a space)", url.QueryEscape(secret)},
		{"path-escaped (%20 for a space)", url.PathEscape(secret)},
		{"every byte percent-encoded in upper case", percentAll(secret, true)},
		{"every byte percent-encoded in lower case", percentAll(secret, false)},
		{"percent-encoding, JSON escapes and HTML references mixed", each(secret, func(r rune, i int) string {
			switch i % 3 {
			case 0:
				return percentAll(string(r), i%2 == 0)
			case 1:
				return UEscape(r, true)
			}
			return fmt.Sprintf("&#%d;", r)
		})},
		{"base64, standard, padded", std},
		{"base64, standard, unpadded", base64.RawStdEncoding.EncodeToString(b)},
		{"base64, URL-safe, padded", base64.URLEncoding.EncodeToString(b)},
		{"base64, URL-safe, unpadded", base64.RawURLEncoding.EncodeToString(b)},
		{"base64 with / JSON-escaped as PHP does", strings.ReplaceAll(std, "/", `\/`)},
		{"base64 query-escaped", url.QueryEscape(std)},
		{"hex, lower case", hex.EncodeToString(b)},
		{"hex, upper case", strings.ToUpper(hex.EncodeToString(b))},
		{"HTML-escaped (&amp; &lt; &gt; &#34;)", html.EscapeString(secret)},
		{"every character as a decimal reference", each(secret, func(r rune, _ int) string { return fmt.Sprintf("&#%d;", r) })},
		{"every character as a hex reference, lower case", each(secret, func(r rune, _ int) string { return fmt.Sprintf("&#x%x;", r) })},
		{"every character as a hex reference, upper case", each(secret, func(r rune, _ int) string { return fmt.Sprintf("&#X%X;", r) })},
		{"named references where they exist (&sol; &plus; &eacute; ...)", named(secret)},
	}
}

// jsonGo and jsonNoHTML drop the quotes json adds, only those: the
// secret may end in an escaped quote.
func jsonGo(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }

func jsonNoHTML(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// JSONLike escapes s as PHP's json_encode (slash: "\/", "\u00e9") or
// Python's json.dumps (ensure_ascii, "/" left alone) do; upper writes
// upper-case hex.
func JSONLike(s string, slash, upper bool) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '/' && slash:
			b.WriteString(`\/`)
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r > 0x7e:
			b.WriteString(UEscape(r, upper))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// UEscape writes r as \uXXXX, as a surrogate pair outside the BMP.
func UEscape(r rune, upper bool) string {
	format := `\u%04x`
	if upper {
		format = `\u%04X`
	}
	if r > 0xffff {
		r1, r2 := utf16.EncodeRune(r)
		return fmt.Sprintf(format+format, r1, r2)
	}
	return fmt.Sprintf(format, r)
}

func each(s string, enc func(rune, int) string) string {
	var b strings.Builder
	i := 0
	for _, r := range s {
		b.WriteString(enc(r, i))
		i++
	}
	return b.String()
}

func percentAll(s string, upper bool) string {
	f := "%%%02x"
	if upper {
		f = "%%%02X"
	}
	var b strings.Builder
	for _, c := range []byte(s) {
		fmt.Fprintf(&b, f, c)
	}
	return b.String()
}

// namedRefs are HTML's names for characters secrets often have.
var namedRefs = map[rune]string{
	'/': "&sol;", '+': "&plus;", '=': "&equals;", ':': "&colon;", '&': "&amp;", '<': "&lt;", '>': "&gt;",
	'"': "&quot;", '\'': "&apos;", '@': "&commat;", '%': "&percnt;", '#': "&num;", '!': "&excl;", '?': "&quest;",
	'_': "&lowbar;", '.': "&period;", '$': "&dollar;", 'é': "&eacute;",
}

func named(s string) string {
	return each(s, func(r rune, _ int) string {
		if n, ok := namedRefs[r]; ok {
			return n
		}
		return string(r)
	})
}
