package redact_test

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/redact"
	"github.com/parleyhq/parley/pkg/redact/redacttest"
)

// The secrets have the characters encoders treat specially: '/', '+', a
// space, '&', '<', '"', non-ASCII letters and a character outside the BMP.
const (
	secret    = `s3cr/et+Kéy&<x>"q`
	spaced    = "correct horse/battery"
	emoji     = "key-🔑-2024"
	plainUser = "svc-bot"
	// slashy's base64 has "/" and "+" (URL-safe: "_" and "-").
	slashy = "k3y???~~~"
)

func basic(user, pass string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
}

func TestRedactFindsTheSecretInEveryEncoding(t *testing.T) {
	secrets := []struct{ name, value string }{
		{"a secret with characters encoders treat specially", secret},
		{"a secret with spaces", spaced},
		{"a secret outside the BMP", emoji},
		{"a secret whose base64 has / and +", slashy},
	}
	if b64 := base64.StdEncoding.EncodeToString([]byte(slashy)); !strings.Contains(b64, "/") || !strings.Contains(b64, "+") {
		t.Fatalf("%q has no / or +: the base64 cases would prove less", b64)
	}
	r := redact.New(secret, spaced, emoji, slashy)
	for _, sec := range secrets {
		for _, sp := range redacttest.Spellings(sec.value) {
			t.Run(sec.name+" "+sp.Name, func(t *testing.T) {
				for _, wrap := range []string{"%s", `{"echo":"%s","ok":true}`, "token=%s&next=1", "<p>%s</p>"} {
					text := fmt.Sprintf(wrap, sp.Text)
					want := fmt.Sprintf(wrap, redact.Mask)
					if got := r.Redact(text); got != want {
						t.Errorf("Redact(%q)\n = %q\nwant %q", text, got, want)
					}
				}
			})
		}
	}
}

func TestRedactFindsBasicAuthCredentialsAtEveryAlignment(t *testing.T) {
	r := redact.New(secret)
	for _, user := range []string{"", "a", "ab", plainUser, "user@example.com"} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			cred := enc.EncodeToString([]byte(user + ":" + secret))
			text := `{"headers":{"Authorization":"Basic ` + cred + `"}}`
			got := r.Redact(text)
			if !strings.Contains(got, redact.Mask) {
				t.Fatalf("user %q: %s left whole: %s", user, cred, got)
			}
			// What is left of the credential may not decode to the secret.
			left := strings.TrimSuffix(strings.TrimPrefix(got, `{"headers":{"Authorization":"Basic `), `"}}`)
			for _, part := range strings.Split(left, redact.Mask) {
				if dec, _ := enc.DecodeString(part); strings.Contains(string(dec), "Kéy") {
					t.Errorf("user %q: %q still decodes to the secret", user, part)
				}
			}
		}
	}
	if got := r.Redact(basic(plainUser, "other-password")); strings.Contains(got, redact.Mask) {
		t.Errorf("another password's credential was touched: %s", got)
	}
}

func TestRedactLeavesOtherTextAlone(t *testing.T) {
	r := redact.New(secret, "abcd")
	cases := []struct{ name, text string }{
		{"ordinary text", "Hello, world: 100% sure & <b>bold</b>"},
		{"escapes that spell something else", `\u0041\/%2F&amp;&#47;+`},
		{"the secret without its last character", secret[:len(secret)-1]},
		{"the secret without its last character, escaped", redacttest.JSONLike(secret[:len(secret)-1], true, false)},
		{"a dangling escape at the end", `abc\u00`},
		{"a dangling percent at the end", "abc%4"},
		{"an ampersand without a reference", "abc & def &; &#; &#x;"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.Redact(tc.text); got != tc.text {
				t.Errorf("Redact(%q) = %q, want it unchanged", tc.text, got)
			}
		})
	}
}

func TestRedactPrefersTheLongestSecret(t *testing.T) {
	r := redact.New("abcd", "abcd-efgh")
	if got := r.Redact("x abcd-efgh y abcd z"); got != "x [redacted] y [redacted] z" {
		t.Errorf("got %q", got)
	}
	var none *redact.Redactor
	if got := none.Redact("abcd"); got != "abcd" {
		t.Errorf("a nil Redactor changed the text: %q", got)
	}
	if redact.New("", "") != nil {
		t.Error("New with only empty secrets is not nil")
	}
}

func TestRedactALiteralPercentInTheSecret(t *testing.T) {
	// "%25" may be the secret's own "%" followed by "25", or an escaped "%".
	r := redact.New("p%25word")
	for _, text := range []string{"p%25word", "p%2525word", url.QueryEscape("p%25word")} {
		if got := r.Redact(text); got != redact.Mask {
			t.Errorf("Redact(%q) = %q", text, got)
		}
	}
}
