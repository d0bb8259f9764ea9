package redact_test

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/redact"
	"github.com/parleyhq/parley/pkg/redact/redacttest"
)

// FuzzRedact checks that no text makes Redact panic, and that a secret put
// into any text, in any of the table's spellings, never survives as is.
func FuzzRedact(f *testing.F) {
	f.Add("before ", "s3cr/et+Kéy", " after", 0)
	f.Add(`{"a":"`, "%25%%25", `"}`, 3)
	f.Add("\\u00", "abcd", "&#x", 7)
	f.Fuzz(func(t *testing.T, before, secret, after string, spelling int) {
		if len(secret) < 4 || strings.ContainsAny(secret, "[]") {
			return // short secrets are not scrubbed; brackets could rebuild one around the mask
		}
		r := redact.New(secret)
		_ = r.Redact(before + after)
		sps := redacttest.Spellings(secret)
		if spelling < 0 {
			spelling = -spelling
		}
		sp := sps[spelling%len(sps)]
		got := r.Redact(before + sp.Text + after)
		if strings.Contains(got, secret) && !strings.Contains(before+after, secret) {
			t.Fatalf("%s: the secret survives in %q (from %q)", sp.Name, got, before+sp.Text+after)
		}
	})
}
