package pii_test

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/pii"
)

// BenchmarkMask masks a typical user message (about 400 bytes with an
// address and a card) with every built-in kind and one pattern.
func BenchmarkMask(b *testing.B) {
	p, _ := pii.CompilePattern("customer_id", `\bCUST-\d{6}\b`)
	d, _ := pii.New(pii.Kinds, []pii.Pattern{p})
	text := strings.Repeat("Hello, my order from last week has not arrived yet. ", 5) +
		"I am ann.lee@example.com, customer CUST-123456, and paid with 4111 1111 1111 1111."
	v := pii.NewVault()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		v.Mask(d, text)
	}
}
