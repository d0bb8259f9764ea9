package llm_test

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/llm"
)

func TestValidToolName(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"letters, digits, underscore and dash pass", "get_order-v2", true},
		{"64 characters pass", strings.Repeat("a", 64), true},
		{"an empty name fails", "", false},
		{"65 characters fail", strings.Repeat("a", 65), false},
		{"a dot fails", "orders.get", false},
		{"a space fails", "get order", false},
		{"a non-ASCII letter fails", "größe", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := llm.ValidToolName(tt.in); got != tt.want {
				t.Fatalf("ValidToolName(%q) = %v; want %v", tt.in, got, tt.want)
			}
		})
	}
}
